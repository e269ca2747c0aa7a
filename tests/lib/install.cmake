# The library as users get it (issue 8): what libsnapdiff.so exports, that each public
# header compiles alone, and cmake --install -> pkg-config -> a program that runs.
set(SNAPDIFF_USER_CFLAGS)
if(SNAPDIFF_SANITIZE)
  # An instrumented library needs the sanitizer runtime in the program that loads it.
  set(SNAPDIFF_USER_CFLAGS -fsanitize=address,undefined)
endif()

# Every function a public header declares is defined and exported in its tier's version
# node, nothing else is, and the stable node holds at most 250 (docs/architecture.md, "Tiers").
add_test(NAME lib_symbols_shared
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_symbols.sh --shared
                 $<TARGET_FILE:snapdiff_shared> ${PROJECT_SOURCE_DIR}/include
                 ${CMAKE_C_COMPILER} -I${PROJECT_BINARY_DIR}/include)

# The tool is a client of its own library (issue 22): it links the static archive, yet
# calls no sdp_ internal.
add_test(NAME cli_public_api_only
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_symbols.sh --client
                 $<TARGET_OBJECTS:snapdiff>
         COMMAND_EXPAND_LISTS)

add_test(NAME lib_headers_alone
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_headers.sh ${CMAKE_C_COMPILER}
                 ${PROJECT_SOURCE_DIR}/include -I${PROJECT_BINARY_DIR}/include)

add_test(NAME lib_install_pkgconfig
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_install.sh ${CMAKE_COMMAND}
                 ${PKG_CONFIG_EXECUTABLE} ${CMAKE_C_COMPILER} ${PYTHON3} ${PROJECT_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR}/docs/library.md
                 ${PROJECT_SOURCE_DIR}/testdata/basic/v2_6_full.pickle
                 ${SNAPDIFF_USER_CFLAGS})

set_tests_properties(lib_symbols_shared cli_public_api_only lib_headers_alone lib_install_pkgconfig
                     PROPERTIES LABELS lib)
# Installs from the build tree, as deb_package's cpack does (tests/lib/package.cmake).
set_tests_properties(lib_install_pkgconfig PROPERTIES RESOURCE_LOCK build_install)
