# The vitis_ai backend's tests (included from tests/CMakeLists.txt). The XIR
# and VART tests need libxir/libvart; without them they skip with a message.
disco_test(targets/vitis_ai/vitis_ai_int8_ops_test disco_target_vitis_ai)
disco_test(targets/vitis_ai/vitis_ai_backend_test disco_driver disco_test_support disco_model_files)
disco_test(targets/vitis_ai/vitis_ai_models_test disco_driver disco_test_support disco_model_files)
disco_test(targets/vitis_ai/vitis_ai_xir_test disco_driver disco_test_support disco_model_files)
disco_test(targets/vitis_ai/vitis_ai_vart_test disco_driver disco_test_support)
if(DISCO_VITIS_AI_XIR)
  target_compile_definitions(vitis_ai_xir_test PRIVATE DISCO_VITIS_AI_XIR=1)
  target_compile_definitions(vitis_ai_vart_test PRIVATE DISCO_VITIS_AI_XIR=1)
else()
  message(STATUS "vitis_ai: the XIR and VART tests will skip (no libxir/libvart)")
endif()
