#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The nightly report in a real browser (Debian's chromium, chromedriver and
python3-selenium, installed by scripts/setup.sh): the page from a 30-night
history loads without console errors; the number of status cells and their
colours match stats.db; a cell's link opens its log; the size chart has one
point per night; with JavaScript disabled the page shows the same cells."""
import os
import sqlite3
import sys
import tempfile
import urllib.parse

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats_fixtures  # noqa: E402
from nightlib import check, pkgtool  # noqa: E402

COLOURS = {"SUCCEEDED": "rgb(26, 127, 55)", "FAILED": "rgb(207, 34, 46)",
           "CANCELLED": "rgb(140, 149, 159)"}


def browser(tmp, javascript=True):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--allow-file-access-from-files",
                f"--user-data-dir={tmp}/profile-{int(javascript)}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if not javascript:
        options.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"),
                            options=options)


def label(pt, py, acc):
    return " ".join(p for p in (pt, f"py{py}" if py else "", acc) if p)


with tempfile.TemporaryDirectory() as tmp:
    root = os.path.join(tmp, "nightly")
    paths = stats_fixtures.write_history(root, 30)
    db = os.path.join(root, "stats.db")
    pkgtool("stats", "ingest", "--db", db, *paths, check=0)
    out = os.path.join(tmp, "report", "index.html")
    pkgtool("nightly", "report", "--db", db, "--html", out, check=0)
    con = sqlite3.connect(db)
    status = {(label(pt, py, acc), d): st for d, pt, py, acc, st in con.execute(
        "SELECT date, package_type, python, accelerator, status FROM documents")}
    nights = {d for (d,) in con.execute(
        "SELECT DISTINCT d.date FROM artifacts a JOIN documents d ON "
        "d.key = a.doc_key WHERE d.package_type = 'manywheel' AND d.python = "
        "'3.11' AND d.accelerator = 'cu124'")}
    check(len(nights) == 30, f"fixture: {len(nights)} nights with a wheel")

    driver = browser(tmp)
    try:
        url = "file://" + urllib.parse.quote(out)
        driver.get(url)
        check(driver.title == "Nightly report 2026-11-24", driver.title)
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        check(not errors, f"console errors: {errors}")

        cells = driver.find_elements(By.CSS_SELECTOR, "table.grid td.cell")
        check(len(cells) == len(status), f"{len(cells)} cells, "
              f"{len(status)} documents")
        seen = set()
        for cell in cells:
            key = (cell.get_attribute("data-config"),
                   cell.get_attribute("data-date"))
            seen.add(key)
            colour = cell.value_of_css_property("background-color")
            want = COLOURS[status[key]]
            check(colour in (want, want.replace("rgb", "rgba")[:-1] + ", 1)"),
                  f"{key}: colour {colour} for {status[key]}")
            if status[key] == "FAILED":
                check(cell.text.strip() not in ("", "✗"),
                      f"{key}: the failing step is not named")
        check(seen == set(status), "cells are not the database's pairs")

        # A failed cell's link opens its log.
        failed = next(c for c in cells if c.get_attribute("data-status") ==
                      "FAILED")
        link = failed.find_element(By.TAG_NAME, "a")
        href = link.get_attribute("href")
        path = urllib.parse.unquote(urllib.parse.urlparse(href).path)
        check(os.path.isfile(path), f"{href}: no such log")
        charts = driver.find_elements(
            By.CSS_SELECTOR, "svg.size-chart[data-config='manywheel py3.11 cu124']")
        check(len(charts) == 1, f"{len(charts)} size charts")
        points = charts[0].find_elements(By.CSS_SELECTOR, "circle.point")
        dates = {p.get_attribute("data-date") for p in points}
        check(len(points) == 30 and dates == nights,
              f"{len(points)} points, {len(dates)} nights")
        check(all(p.is_displayed() for p in points), "hidden points")
        job = failed.get_attribute("title").split()[0]
        link.click()
        body = driver.find_element(By.TAG_NAME, "body").text
        check(f"log of {job}" in body and "FAILED" in body, body)
    finally:
        driver.quit()

    # Readable without JavaScript: the same cells and charts.
    driver = browser(tmp, javascript=False)
    try:
        driver.get("file://" + urllib.parse.quote(out))
        n = len(driver.find_elements(By.CSS_SELECTOR, "table.grid td.cell"))
        check(n == len(status), f"without JavaScript: {n} cells")
        check(driver.find_elements(By.CSS_SELECTOR, "svg.size-chart"),
              "without JavaScript: no chart")
    finally:
        driver.quit()
print("ok")
