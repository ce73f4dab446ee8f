// SPDX-License-Identifier: BSD-3-Clause
#include "workflow_yaml.hpp"

#include <algorithm>
#include <cctype>

namespace libpkg::nightly {

namespace {

using nlohmann::ordered_json;

// Words YAML 1.1 (PyYAML, GitHub's old parser) reads as booleans or null:
// `on:` would become the key `true`.
bool reserved_word(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const char* w :
       {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"})
    if (s == w) return true;
  return false;
}

// Plain (unquoted) only for strings that read back as themselves in every
// YAML version: a letter or '_' first, then letters, digits and `_ - . /`,
// and not a reserved word. Everything else is quoted.
bool plain_ok(const std::string& s) {
  if (s.empty() ||
      !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' &&
        c != '.' && c != '/')
      return false;
  return !reserved_word(s);
}

std::string scalar(const ordered_json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return plain_ok(s) ? s : v.dump();
  }
  return v.dump();  // numbers, booleans, null: their JSON spelling
}

bool block_literal_ok(const std::string& s) {
  // A first line starting with a space would need an indentation
  // indicator; trailing spaces and tabs are kept only when quoted.
  if (s.find('\n') == std::string::npos || s[0] == ' ' || s[0] == '\n')
    return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\t' || s[i] == '\r') return false;
    if (s[i] == ' ' && (i + 1 == s.size() || s[i + 1] == '\n')) return false;
  }
  return true;
}

void emit(const ordered_json& v, int indent, std::string& out);

// `key: value` or `key:` + the nested block. `lead` is what precedes the
// key on its line ("- " for the first key of a sequence item).
void emit_value_after_key(const ordered_json& v, int indent, std::string& out) {
  if ((v.is_object() || v.is_array()) && !v.empty()) {
    out += "\n";
    // Sequences under a key are indented like its keys would be, as
    // GitHub's own examples write them.
    emit(v, indent + 2, out);
  } else if (v.is_object()) {
    out += " {}\n";
  } else if (v.is_array()) {
    out += " []\n";
  } else if (v.is_string() &&
             block_literal_ok(v.get_ref<const std::string&>())) {
    const std::string& s = v.get_ref<const std::string&>();
    bool trailing = s.back() == '\n';
    out += trailing ? " |\n" : " |-\n";
    std::size_t pos = 0;
    std::string pad(static_cast<std::size_t>(indent + 2), ' ');
    while (pos < s.size()) {
      std::size_t eol = s.find('\n', pos);
      std::string line =
          s.substr(pos, eol == std::string::npos ? eol : eol - pos);
      out += line.empty() ? "" : pad + line;
      out += "\n";
      if (eol == std::string::npos) break;
      pos = eol + 1;
    }
  } else {
    out += " " + scalar(v) + "\n";
  }
}

void emit(const ordered_json& v, int indent, std::string& out) {
  std::string pad(static_cast<std::size_t>(indent), ' ');
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      out += pad + scalar(ordered_json(it.key())) + ":";
      emit_value_after_key(it.value(), indent, out);
    }
  } else if (v.is_array()) {
    for (const auto& item : v) {
      if (item.is_object() && !item.empty()) {
        // "- key: value" then the other keys aligned under the first.
        std::string nested;
        emit(item, indent + 2, nested);
        out += pad + "- " + nested.substr(static_cast<std::size_t>(indent + 2));
      } else if (item.is_array() && !item.empty()) {
        out += pad + "-\n";
        emit(item, indent + 2, out);
      } else {
        std::string line;
        emit_value_after_key(item, indent, line);  // " value\n"
        out += pad + "-" + line;
      }
    }
  }
}

}  // namespace

std::string to_yaml(const ordered_json& tree) {
  std::string out;
  emit(tree, 0, out);
  return out;
}

}  // namespace libpkg::nightly
