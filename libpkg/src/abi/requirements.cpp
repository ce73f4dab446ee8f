// SPDX-License-Identifier: BSD-3-Clause
// version_requirements: the (library, version) pairs of .gnu.version_r with
// the undefined symbols bound to each. One pass over .dynsym: every
// undefined symbol carries the name of its version and of the library that
// defines it (ElfFile resolves .gnu.version for us), which identifies the
// requirement; examples are demangled only for symbols that need a version.
#include "libpkg/abi/requirements.hpp"

#include <iterator>
#include <map>
#include <set>
#include <string_view>
#include <utility>

namespace libpkg::abi {

std::vector<VersionRequirement> version_requirements(const elf::ElfFile& elf,
                                                     std::size_t max_examples) {
  std::vector<VersionRequirement> out;
  // (library, version) → position in `out`. The same version name can be
  // needed from two libraries (GLIBC_2.2.5 from libc and libm): separate
  // entries, as in the file.
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> index;
  for (const auto& need : elf.version_needs()) {
    for (const auto& aux : need.versions) {
      if (index.emplace(std::pair{need.file, aux.name}, out.size()).second)
        out.push_back({std::string(need.file), std::string(aux.name), {}, 0});
    }
  }
  if (out.empty()) return out;

  // The alphabetically first `max_examples` demangled names per entry: a
  // bounded ordered set keeps memory small on libraries with 10^5 symbols
  // and makes the examples independent of the symbol table's order.
  std::vector<std::set<std::string>> examples(out.size());
  elf.for_each_dynamic_symbol([&](const elf::Symbol& sym) {
    if (sym.is_defined() || sym.version.empty() || sym.version_file.empty())
      return;
    auto it = index.find({sym.version_file, sym.version});
    if (it == index.end()) return;
    VersionRequirement& req = out[it->second];
    ++req.symbol_count;
    if (max_examples == 0) return;
    auto& set = examples[it->second];
    std::string name = elf::demangle(sym.name);
    if (set.size() == max_examples && !(name < *set.rbegin())) return;
    set.insert(std::move(name));
    if (set.size() > max_examples) set.erase(std::prev(set.end()));
  });
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i].symbols.assign(examples[i].begin(), examples[i].end());
  return out;
}

}  // namespace libpkg::abi
