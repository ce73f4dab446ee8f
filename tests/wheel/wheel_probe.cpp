// SPDX-License-Identifier: BSD-3-Clause
// Test driver exposing the wheel layer's pure functions to scripts, so they
// can be cross-checked against Python (packaging, csv) on many inputs:
//   wheel_probe names < NAMES       one JSON object per input line
//   wheel_probe csv-parse FILE      JSON array of rows
//   wheel_probe csv-format FILE     FILE: JSON array of rows → CSV on stdout
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "libpkg/base/error.hpp"
#include "libpkg/wheel/name.hpp"
#include "libpkg/wheel/record.hpp"

namespace wh = libpkg::wheel;

namespace {

std::string slurp(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int names() {
  std::string line;
  while (std::getline(std::cin, line)) {
    nlohmann::json j = {{"input", line}};
    try {
      auto n = wh::WheelName::parse(line);
      j["ok"] = true;
      j["distribution"] = n.distribution;
      j["canonical"] = wh::canonicalize_name(n.distribution);
      j["escaped"] = wh::escape_distribution(n.distribution);
      j["version"] = n.version;
      j["build"] = n.build ? nlohmann::json(*n.build) : nlohmann::json();
      std::vector<std::string> tags;
      for (const auto& t : n.tags()) tags.push_back(t.str());
      j["tags"] = tags;
      j["formatted"] = n.format();
    } catch (const libpkg::Error& e) {
      j["ok"] = false;
      j["error"] = e.what();
    }
    std::cout << j.dump() << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  try {
    if (cmd == "names") return names();
    if (cmd == "csv-parse" && argc == 3) {
      std::cout << nlohmann::json(wh::parse_csv(slurp(argv[2]), argv[2])).dump()
                << "\n";
      return 0;
    }
    if (cmd == "csv-format" && argc == 3) {
      auto rows = nlohmann::json::parse(slurp(argv[2]))
                      .get<std::vector<std::vector<std::string>>>();
      for (const auto& r : rows) std::cout << wh::format_csv_row(r);
      return 0;
    }
  } catch (const libpkg::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr, "usage: wheel_probe names|csv-parse F|csv-format F\n");
  return 2;
}
