# The Debian packages (issue 30): cpack -G DEB, their contents and dependencies, installed
# into a temporary root (dpkg -x) where the tool runs and a program builds from the .pc;
# then lintian over them (deb_lintian: about 40 s; skipped without lintian). Both in the
# full run (tests/full.sh package, on build/), not in tests/run.sh. Not in a sanitizer
# build: its binaries need the sanitizer runtime.
if(NOT SNAPDIFF_SANITIZE)
  add_test(NAME deb_package
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_deb.sh ${PROJECT_BINARY_DIR}
                   ${CMAKE_C_COMPILER} ${PROJECT_SOURCE_DIR}/testdata/basic/v2_6_full.pickle
                   ${PROJECT_VERSION} ${SNAPDIFF_SOVERSION})
  add_test(NAME deb_lintian
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_deb.sh ${PROJECT_BINARY_DIR}
                   ${CMAKE_C_COMPILER} ${PROJECT_SOURCE_DIR}/testdata/basic/v2_6_full.pickle
                   ${PROJECT_VERSION} ${SNAPDIFF_SOVERSION} lintian)
  # build_install: cpack installs from the build tree, which writes src/snapdiff.pc for
  # its prefix as lib_install_pkgconfig's install does for another: one at a time.
  set_tests_properties(deb_package PROPERTIES LABELS "package;full;plain" TIMEOUT 600
                       FIXTURES_SETUP deb_packages RESOURCE_LOCK "deb_test;build_install")
  set_tests_properties(deb_lintian PROPERTIES LABELS "package;full;plain" TIMEOUT 600
                       FIXTURES_REQUIRED deb_packages RESOURCE_LOCK deb_test
                       SKIP_RETURN_CODE 77)
endif()
