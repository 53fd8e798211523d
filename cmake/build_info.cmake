# Run at build time (cmake -P): writes OUT, a header with the commit the tree was built from
# (with "-dirty" when tracked files differ from it) and the project's version, only when that
# changed, so that what is built names its own source and not whatever repository a command
# later runs in. Arguments: -DSOURCE_DIR=... -DOUT=... -DVERSION=...
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --verify --quiet HEAD
                  WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
    set(commit "${head}")
    execute_process(COMMAND "${GIT_EXECUTABLE}" status --porcelain --untracked-files=no
                    WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND NOT changes STREQUAL "")
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
set(text "// Generated at build time by cmake/build_info.cmake: do not edit.\n#pragma once\n#define SLIPSTREAM_BUILD_COMMIT \"${commit}\"\n#define SLIPSTREAM_BUILD_VERSION \"${VERSION}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
