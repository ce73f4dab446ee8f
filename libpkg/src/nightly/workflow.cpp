// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/workflow.hpp"

#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "libpkg/base/error.hpp"
#include "libpkg/config/matrix.hpp"
#include "libpkg/config/version.hpp"
#include "workflow_recipes.hpp"
#include "workflow_yaml.hpp"

namespace libpkg::nightly {

using nlohmann::ordered_json;
namespace cfg = config;

namespace {

constexpr const char* kArgumentsTag = "# pkgtool-workflow-arguments:";
constexpr const char* kCheckout = "actions/checkout@v4";
constexpr const char* kUpload = "actions/upload-artifact@v4";
constexpr const char* kDownload = "actions/download-artifact@v4";

std::string expr(const std::string& e) { return "${{ " + e + " }}"; }

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string upper(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A word for the generated shell scripts: as is when it is plain, else in
// single quotes.
std::string shell_word(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' &&
        c != '.' && c != '/' && c != ',' && c != '+' && c != '=')
      plain = false;
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// One configuration's strategy.matrix entry: what `pkgtool matrix` says
// about it (its build name and BUILD_ENVIRONMENT, the nightly's config
// fields), its version's local suffix, then its recipe's fields.
ordered_json matrix_entry(const cfg::BuildConfig& c) {
  ordered_json e = {
      {"build_name", cfg::build_name(c)},
      {"build_environment", c.build_environment()},
      {"package_type", cfg::package_type_name(c.type)},
      {"python", c.python ? c.python->str() : ""},
      {"accelerator", c.accelerator.tag()},
      {"cxx_abi", cfg::cxx_abi_option(c.cxx_abi)},
      {"libtorch_variant", c.variant ? c.variant->name() : ""},
      {"os", c.os},
      {"arch", c.arch},
      // +cu124: the nightly's version is the plan's base + this; conda and
      // macOS builds get none (config::local_suffix; binary_populate_env.sh
      // kept Darwin's version plain, libtorch's included).
      {"version_suffix", cfg::local_suffix(c)}};
  add_recipe_fields(c, e);
  return e;
}

// The job-level environment: BUILD_ENVIRONMENT (what the drivers read),
// NIGHTLY_BUILD_NAME and NIGHTLY_PYTHON, the recipe's fields as NIGHTLY_<FIELD>
// (MACOSX_DEPLOYMENT_TARGET under its own name, for the compilers and
// wheel_macos), and the nightly's version and commit from the plan job.
// The scripts read variables, never ${{ }} expressions; and no variable
// starts with BUILD_, USE_ or CMAKE_, which PyTorch's setup.py hands to
// CMake as -D options.
ordered_json job_env(const ordered_json& entry) {
  ordered_json env = {{"BUILD_ENVIRONMENT", expr("matrix.build_environment")},
                      {"NIGHTLY_BUILD_NAME", expr("matrix.build_name")},
                      {"NIGHTLY_PYTHON", expr("matrix.python")}};
  bool recipe = false;
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    if (it.key() == "version_suffix") {  // the recipe's fields follow it
      recipe = true;
      continue;
    }
    if (!recipe || it.key() == "runs_on" || it.key() == "image" ||
        it.key() == "build_runs_on")
      continue;
    env[it.key() == "macosx_deployment_target"
            ? std::string("MACOSX_DEPLOYMENT_TARGET")
            : "NIGHTLY_" + upper(it.key())] = expr("matrix." + it.key());
  }
  std::string version =
      expr("needs.plan.outputs.base_version") + expr("matrix.version_suffix");
  // The cron's rule: nightlies set the exact version (build number 0); for
  // setup.py, and passed to the drivers as --version (with --build-env they
  // read no other variable).
  env["PYTORCH_BUILD_VERSION"] = version;
  env["OVERRIDE_PACKAGE_VERSION"] = version;
  env["SOURCE_SHA"] = expr("needs.plan.outputs.sha");
  env["SOURCE_DATE_EPOCH"] = expr("needs.plan.outputs.epoch");
  env["NIGHTLY_DATE"] = expr("needs.plan.outputs.date");
  return env;
}

ordered_json checkout_source() {
  return {{"name", "checkout"},
          {"uses", kCheckout},
          {"with",
           {{"repository", expr("env.SOURCE_REPOSITORY")},
            {"ref", expr("needs.plan.outputs.sha")},
            {"path", "pytorch"},
            {"submodules", "recursive"}}}};
}

ordered_json upload(const std::string& name, const std::string& artifact,
                    const std::string& path, const char* if_missing,
                    const char* condition) {
  ordered_json s = {{"name", name}};
  if (condition) s["if"] = condition;
  s["uses"] = kUpload;
  s["with"] = {
      {"name", artifact}, {"path", path}, {"if-no-files-found", if_missing}};
  return s;
}

ordered_json strategy(const ordered_json& include) {
  return {{"fail-fast", false}, {"matrix", {{"include", include}}}};
}

ordered_json plan_job(const WorkflowOptions& o) {
  (void)o;
  return {
      {"runs-on", "ubuntu-22.04"},
      {"outputs",
       {{"date", expr("steps.plan.outputs.date")},
        {"day", expr("steps.plan.outputs.day")},
        {"epoch", expr("steps.plan.outputs.epoch")},
        {"base_version", expr("steps.plan.outputs.base_version")},
        {"sha", expr("steps.plan.outputs.sha")}}},
      {"steps",
       {{{"name", "checkout"},
         {"uses", kCheckout},
         {"with",
          {{"repository", expr("env.SOURCE_REPOSITORY")},
           {"path", "pytorch"}}}},
        // One date and one commit for the whole nightly, taken once: jobs
        // starting after midnight still build the same version.
        {{"name", "plan"},
         {"id", "plan"},
         {"run",
          "now=$(date -u +%s)\n"
          "day=$(date -u -d \"@$now\" +%Y-%m-%d)\n"
          "base=$(sed -n '1s/[^0-9.].*//p' pytorch/version.txt)\n"
          "{\n"
          "  echo \"date=$(date -u -d \"@$now\" +%Y_%m_%d)\"\n"
          "  echo \"day=$day\"\n"
          "  echo \"epoch=$(date -u -d \"$day\" +%s)\"\n"
          "  echo \"base_version=$base.dev$(date -u -d \"@$now\" +%Y%m%d)\"\n"
          "  echo \"sha=$(git -C pytorch rev-parse HEAD)\"\n"
          "} >> \"$GITHUB_OUTPUT\"\n"}}}}};
}

// The macOS build job of a recipe built on macOS: the build, uploaded as
// built-<build name> for the packaging job.
ordered_json macos_build_job(Recipe r, const ordered_json& include) {
  ordered_json steps = ordered_json::array();
  steps.push_back(checkout_source());
  steps.push_back({{"name", "python"},
                   {"uses", "actions/setup-python@v5"},
                   {"with", {{"python-version", "3.11"}}}});
  if (r == Recipe::wheel_macos)
    steps.back()["with"]["python-version"] = expr("matrix.python");
  for (const auto& s : build_steps(r)) steps.push_back(s);
  steps.push_back(upload("upload the build",
                         "built-" + expr("matrix.build_name"), "built/",
                         "error", nullptr));
  return {{"name", "build " + expr("matrix.build_name")},
          {"needs", "plan"},
          {"runs-on", expr("matrix.build_runs_on")},
          {"timeout-minutes", 480},
          {"strategy", strategy(include)},
          {"env", job_env(include[0])},
          {"steps", steps}};
}

// The job that runs the driver, one matrix entry per configuration.
ordered_json package_job(Recipe r, const ordered_json& include) {
  ordered_json steps = ordered_json::array();
  ordered_json needs = "plan";
  if (built_on_macos(r)) {
    needs = ordered_json::array({"plan", job_id(r) + "-build"});
    steps.push_back({{"name", "download the build"},
                     {"uses", kDownload},
                     {"with",
                      {{"name", "built-" + expr("matrix.build_name")},
                       {"path", "built"}}}});
  } else {
    steps.push_back(checkout_source());
    for (const auto& s : build_steps(r)) steps.push_back(s);
  }
  steps.push_back(
      {{"name", "package"}, {"id", "package"}, {"run", package_script(r)}});
  // The summary also of a failed job (the stats record the failure); the
  // package only of a passing one (the final job publishes what it gets).
  steps.push_back(upload("upload the summary",
                         "summary-" + expr("matrix.build_name"), "summary/",
                         "ignore", "${{ !cancelled() }}"));
  steps.push_back(upload("upload the package",
                         "package-" + expr("matrix.build_name"), "dist/",
                         "error", nullptr));
  ordered_json job = {{"name", expr("matrix.build_name")}, {"needs", needs}};
  // A failed macOS build must not skip the packaging of the others.
  if (built_on_macos(r))
    job["if"] = "${{ !cancelled() && needs.plan.result == 'success' }}";
  job["runs-on"] = expr("matrix.runs_on");
  job["container"] = {{"image", expr("matrix.image")}};
  job["timeout-minutes"] = 480;
  job["strategy"] = strategy(include);
  job["env"] = job_env(include[0]);
  job["steps"] = steps;
  return job;
}

// The import command of the final job's `nightly run`: one job per
// configuration (the same matrix and filters, so the same names), which
// takes its CI job's summary and package. A configuration whose CI job
// left no package failed (or never ran): its nightly job fails, with the
// failing check from its summary when there is one.
const char* kImportCommand =
    "echo ::step import; "
    "s=\"$GITHUB_WORKSPACE/summaries/$NIGHTLY_JOB.json\"; "
    "p=\"$GITHUB_WORKSPACE/packages/package-$NIGHTLY_JOB\"; "
    "if [ -f \"$s\" ]; then cp \"$s\" \"$NIGHTLY_SUMMARY\"; fi; "
    "if [ ! -d \"$p\" ]; then echo \"$NIGHTLY_JOB: no package: its CI job "
    "failed or did not run\"; exit 1; fi; "
    "cp -R \"$p/.\" \"$NIGHTLY_ARTIFACT_DIR/\"";

ordered_json final_job(const WorkflowOptions& o,
                       const std::vector<std::string>& package_jobs) {
  std::string filters;
  auto add = [&](const char* flag, const std::vector<std::string>& values) {
    if (!values.empty())
      filters += std::string(" ") + flag + " " + shell_word(join(values, ","));
  };
  if (!o.matrix_file.empty())
    filters += " --matrix-file " + shell_word(o.matrix_file);
  add("--package-type", o.package_types);
  add("--cuda", o.accelerators);
  add("--python", o.pythons);

  ordered_json steps = ordered_json::array();
  steps.push_back({{"name", "checkout"}, {"uses", kCheckout}});
  if (!o.path.empty())
    // The workflow and its data must agree, and the tools of the image
    // must be the ones that generated it.
    steps.push_back({{"name", "check the workflow"},
                     {"run", "\"$LIBPKG_BIN/pkgtool\" workflow --check " +
                                 shell_word(o.path) + "\n"}});
  steps.push_back({{"name", "download the summaries"},
                   {"uses", kDownload},
                   {"with",
                    {{"pattern", "summary-*"},
                     {"path", "summaries"},
                     {"merge-multiple", true}}}});
  steps.push_back({{"name", "download the packages"},
                   {"uses", kDownload},
                   {"with", {{"pattern", "package-*"}, {"path", "packages"}}}});
  // stats.db carries the history the report draws; kept from run to run.
  steps.push_back({{"name", "restore the stats"},
                   {"uses", "actions/cache/restore@v4"},
                   {"with",
                    {{"path", "nightly/stats.db"},
                     {"key", "nightly-stats-" + expr("github.run_id")},
                     {"restore-keys", "nightly-stats-"}}}});
  steps.push_back(
      {{"name", "import"},
       {"run",
        // Exit 1 (a configuration failed) is the nightly's news, not the
        // step's failure; 2 (bad input) is. --no-stats: the ingest step
        // below records one document per configuration (the driver's
        // summary where there is one), the runner's would be a second.
        "status=0\n\"$LIBPKG_BIN/pkgtool\" nightly run --root nightly --date "
        "\"$NIGHTLY_DATE\" --no-publish --no-stats -q" +
            filters + " --command '" + kImportCommand +
            "' || status=$?\n"
            "[ \"$status\" -le 1 ]\n"}});
  steps.push_back(
      {{"name", "ingest"},
       // The driver summaries, plus the job documents of configurations
       // that have none (their CI job stopped before its driver wrote one,
       // or they have no driver): one document per configuration.
       {"run",
        "set --\n"
        "if [ -d summaries ]; then set -- summaries; fi\n"
        "for doc in \"nightly/$NIGHTLY_DATE\"/jobs/*.json; do\n"
        "  [ -f \"summaries/$(basename \"$doc\")\" ] || set -- \"$@\" "
        "\"$doc\"\n"
        "done\n"
        "\"$LIBPKG_BIN/pkgtool\" stats ingest --db nightly/stats.db --date "
        "\"$NIGHTLY_DAY\" \"$@\"\n"}});
  steps.push_back(
      {{"name", "publish"},
       {"run",
        "\"$LIBPKG_BIN/pkgtool\" nightly publish --root nightly --date "
        "\"$NIGHTLY_DATE\" --channel nightly/channel --keep " +
            std::to_string(o.keep) + "\n"}});
  steps.push_back(
      {{"name", "report"},
       {"run",
        "\"$LIBPKG_BIN/pkgtool\" nightly report --db nightly/stats.db --html "
        "nightly/report/index.html --nightly-root nightly\n"}});
  steps.push_back({{"name", "save the stats"},
                   {"if", "${{ !cancelled() }}"},
                   {"uses", "actions/cache/save@v4"},
                   {"with",
                    {{"path", "nightly/stats.db"},
                     {"key", "nightly-stats-" + expr("github.run_id")}}}});
  steps.push_back(upload(
      "upload the report", "nightly-report",
      "nightly/report/\nnightly/" + expr("env.NIGHTLY_DATE") + "/logs/\n",
      "error", "${{ !cancelled() }}"));
  steps.push_back(upload("upload the channel", "nightly-channel",
                         "nightly/channel/", "error", nullptr));

  ordered_json needs = ordered_json::array({"plan"});
  for (const auto& j : package_jobs) needs.push_back(j);
  return {{"needs", needs},
          // Publish what passed even when some configurations failed.
          {"if", "${{ !cancelled() && needs.plan.result == 'success' }}"},
          {"runs-on", "ubuntu-22.04"},
          {"container", {{"image", tools_image()}}},
          {"env",
           {{"NIGHTLY_DATE", expr("needs.plan.outputs.date")},
            {"NIGHTLY_DAY", expr("needs.plan.outputs.day")}}},
          {"steps", steps}};
}

}  // namespace

std::string workflow_yaml(const std::vector<cfg::BuildConfig>& configs,
                          const WorkflowOptions& o) {
  if (configs.empty())
    throw Error(Errc::usage, "workflow", "no configuration to build");

  // Recipes in a fixed order, configurations in matrix order within each.
  std::map<Recipe, ordered_json> groups;
  std::map<std::string, std::size_t> per_type;
  for (const auto& c : configs) {
    auto& g = groups[recipe_of(c)];
    if (g.is_null()) g = ordered_json::array();
    g.push_back(matrix_entry(c));
    ++per_type[cfg::package_type_name(c.type)];
  }

  std::string counts;
  for (const auto& [type, n] : per_type)
    counts += (counts.empty() ? "" : ", ") + type + " " + std::to_string(n);
  std::string args = ordered_json(o.arguments).dump();
  std::string header =
      "# Generated by `pkgtool workflow` from the configuration matrix (" +
      (o.matrix_file.empty()
           ? std::string("pkgtool's built-in data/matrix.json")
           : o.matrix_file) +
      "):\n# " + std::to_string(configs.size()) +
      (configs.size() == 1 ? " configuration (" : " configurations (") +
      counts +
      "), one CI job each.\n"
      "# Do not edit: regenerate with the arguments below; `pkgtool workflow\n"
      "# --check FILE` fails when this file no longer matches the data.\n" +
      kArgumentsTag + " " + args + "\n";

  ordered_json doc;
  doc["name"] = o.name;
  doc["on"] = {{"schedule", ordered_json::array({{{"cron", o.cron}}})},
               {"workflow_dispatch", ordered_json::object()}};
  doc["permissions"] = {{"contents", "read"}};
  doc["concurrency"] = {{"group", o.name}, {"cancel-in-progress", false}};
  doc["defaults"] = {{"run", {{"shell", "bash"}}}};
  // libpkg's tools are installed in the build images (as patchelf was in
  // the old ones), under one prefix: the conda driver's name would
  // otherwise meet conda's own on PATH.
  doc["env"] = {{"LIBPKG_BIN", "/opt/libpkg/bin"},
                {"SOURCE_REPOSITORY", o.source}};
  ordered_json jobs;
  jobs["plan"] = plan_job(o);
  std::vector<std::string> package_jobs;
  for (const auto& [recipe, include] : groups) {
    if (built_on_macos(recipe))
      jobs[job_id(recipe) + "-build"] = macos_build_job(recipe, include);
    jobs[job_id(recipe)] = package_job(recipe, include);
    package_jobs.push_back(job_id(recipe));
  }
  jobs["nightly"] = final_job(o, package_jobs);
  doc["jobs"] = jobs;
  return header + to_yaml(doc);
}

std::optional<std::vector<std::string>> recorded_workflow_arguments(
    std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, eol == std::string_view::npos ? std::string_view::npos
                                                       : eol - pos);
    if (line.rfind(kArgumentsTag, 0) == 0) {
      auto j = ordered_json::parse(
          line.substr(std::string_view(kArgumentsTag).size()), nullptr, false);
      if (!j.is_array()) return std::nullopt;
      std::vector<std::string> args;
      for (const auto& a : j) {
        if (!a.is_string()) return std::nullopt;
        args.push_back(a.get<std::string>());
      }
      return args;
    }
    if (line.empty() || line[0] != '#') break;  // only the header counts
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
  }
  return std::nullopt;
}

std::optional<TextDifference> first_difference(std::string_view expected,
                                               std::string_view found) {
  std::size_t line = 1, a = 0, b = 0;
  auto next = [](std::string_view t, std::size_t& pos, bool& ended) {
    if (pos >= t.size()) {
      ended = true;
      return std::string();
    }
    std::size_t eol = t.find('\n', pos);
    std::string out(t.substr(pos, eol == std::string_view::npos
                                      ? std::string_view::npos
                                      : eol - pos));
    pos = eol == std::string_view::npos ? t.size() : eol + 1;
    return out;
  };
  for (;;) {
    TextDifference d;
    d.line = line;
    d.expected = next(expected, a, d.expected_ended);
    d.found = next(found, b, d.found_ended);
    if (d.expected_ended && d.found_ended) {
      if (expected == found) return std::nullopt;
      // Equal lines, but one ends with a newline and the other does not.
      d.line = line - 1;
      d.expected = expected.ends_with('\n') ? "(a newline at the end)"
                                            : "(no newline at the end)";
      d.found = found.ends_with('\n') ? "(a newline at the end)"
                                      : "(no newline at the end)";
      d.expected_ended = d.found_ended = false;
      return d;
    }
    if (d.expected != d.found || d.expected_ended != d.found_ended) return d;
    ++line;
  }
}

}  // namespace libpkg::nightly
