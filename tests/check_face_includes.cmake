# The arrows of the faces (SPEC 11, docs/architecture.md "Folders"), a grep of the includes:
# - The faces (cli/, mcp/, http/) reach the core through ops/ only: none includes the store
#   (state/), tmux (tmux/) or the domain folders (team/, tasks/, shells/, sessions/) itself.
#   Waiting for the store's changes is the core's seam (ops/changes.hpp), attaching a terminal a
#   core call.
# - Nothing below the faces includes a face: no file outside cli/, mcp/, http/, tests/ and bench/
#   includes cli/, mcp/ or http/ (what two rooms share sits below both, as jsonrpc/ does for acp/
#   and mcp/).
# Usage: cmake -DROOT=<source dir> -P this.
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

# Every folder of sources but the faces, the tests, the benchmark and build trees.
file(GLOB top RELATIVE ${ROOT} ${ROOT}/*)
set(below "")
foreach(d IN LISTS top)
  if(NOT IS_DIRECTORY ${ROOT}/${d} OR d MATCHES "^(cli|mcp|http|tests|bench|build.*|\\..*)$")
    continue()
  endif()
  file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/${d}/*.cpp ${ROOT}/${d}/*.hpp)
  list(APPEND below ${files})
endforeach()
foreach(f IN LISTS below)
  file(STRINGS ${ROOT}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<](cli|mcp|http)/")
  foreach(l IN LISTS lines)
    string(APPEND bad "  ${f}: ${l}\n")
  endforeach()
endforeach()
list(LENGTH below count)
if(count EQUAL 0)
  message(FATAL_ERROR "no source files below the faces under ${ROOT}")
endif()
if(bad)
  message(FATAL_ERROR "a room below the faces includes a face (cli/, mcp/, http/):\n${bad}")
endif()
message(STATUS "${count} files below the faces include none of them")
