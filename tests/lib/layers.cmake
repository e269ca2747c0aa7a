# Architecture: every #include between the layers of src/ goes downwards
# (base, pickle, source, model, analysis, render, cli); see tests/lib/check_layers.sh.
add_test(NAME layers_downwards
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_layers.sh ${PROJECT_SOURCE_DIR}/src)
set_tests_properties(layers_downwards PROPERTIES LABELS docs)
