# Writes OUTPUT (a C++ source defining cmlbed::kGitRevision) from the checkout in
# SOURCE_DIR. Run at every build (CMakeLists.txt, target cmlbed_git_revision), not only
# at configure time: a binary built after a new commit must not stamp the old revision
# into its results files. "-dirty" marks a build of uncommitted tracked changes. The file
# is rewritten only when its text changes, so an unchanged revision recompiles nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE failed ERROR_QUIET)
if(failed OR NOT revision)
  set(revision "unknown")
else()
  execute_process(COMMAND git diff --quiet HEAD --
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  RESULT_VARIABLE dirty ERROR_QUIET)
  if(dirty)
    string(APPEND revision "-dirty")
  endif()
endif()
set(text "// Generated at build time by src/git_revision.cmake.
#include \"cmlbed/version.hpp\"
namespace cmlbed {
const char* const kGitRevision = \"${revision}\";
}  // namespace cmlbed
")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old_text)
endif()
if(NOT old_text STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
