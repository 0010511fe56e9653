# The faces (cli/, mcp/, http/) reach the core through ops/ only (SPEC 11, docs/architecture.md
# "Folders"): none includes the store (state/), tmux (tmux/) or the domain folders (team/,
# tasks/, shells/, sessions/) itself. Waiting for the store's changes is the core's seam
# (ops/changes.hpp), attaching a terminal a core call. Usage: cmake -DROOT=<source dir> -P this.
file(GLOB faces RELATIVE ${ROOT} ${ROOT}/cli/* ${ROOT}/mcp/* ${ROOT}/http/*)
set(bad "")
foreach(f IN LISTS faces)
  file(STRINGS ${ROOT}/${f} lines
       REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<](state|tmux|team|tasks|shells|sessions)/")
  foreach(l IN LISTS lines)
    string(APPEND bad "  ${f}: ${l}\n")
  endforeach()
endforeach()
list(LENGTH faces count)
if(count EQUAL 0)
  message(FATAL_ERROR "no face files under ${ROOT}: is ROOT the source tree?")
endif()
if(bad)
  message(FATAL_ERROR "a face includes below ops/ (reach the core through ops/):\n${bad}")
endif()
message(STATUS "${count} files of the faces include nothing below ops/")
