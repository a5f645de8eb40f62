# cmake -DTEST_EXECUTABLE=BIN -DCTEST_FILE=OUT -DTEST_ENVIRONMENT=VAR=VALUE -DTEST_TIMEOUT=S -P gtest_suites.cmake
# Writes OUT, which ctest includes: one test per GoogleTest suite of BIN, named after the
# suite and running BIN --gtest_filter=SUITE.* (tests/CMakeLists.txt, cmlbed_unit_test).
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                OUTPUT_VARIABLE listing ERROR_VARIABLE listing RESULT_VARIABLE status TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${status}):\n${listing}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(tests "")
foreach(line IN LISTS lines)
  # A suite's line starts in the first column and ends with '.' (a parameterised one may
  # go on with a comment); its cases' lines are indented.
  if(line MATCHES "^([^ ]+)\\.( |$)")
    set(suite "${CMAKE_MATCH_1}")
    string(APPEND tests
      "add_test([==[${suite}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n"
      "set_tests_properties([==[${suite}]==] PROPERTIES ENVIRONMENT [==[${TEST_ENVIRONMENT}]==]"
      " TIMEOUT ${TEST_TIMEOUT})\n")
  endif()
endforeach()
if(tests STREQUAL "")
  message(FATAL_ERROR "${TEST_EXECUTABLE} lists no test suites:\n${listing}")
endif()
file(WRITE "${CTEST_FILE}" "${tests}")
