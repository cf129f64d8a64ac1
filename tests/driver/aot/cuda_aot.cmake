# CUDA AOT libraries (issue #7): bert_layer and convnet compiled with `disco compile --target
# cuda70|cuda80|cuda86` at build time (Halide emits the PTX itself; no GPU or CUDA toolkit
# needed), each linked alone into aot_gpu_harness. Without a GPU the run must return an error
# naming CUDA, not abort (aot_cuda_*); with the CUDA stub driver it fails in cuInit the same
# way (aot_cuda_stub_*); on a machine with a GPU the same tests check the output against PyTorch.
set(cuda_stubs /usr/local/cuda/lib64/stubs)
foreach(model bert_layer convnet)
  aot_test_model(${model} path)  # CMakeLists.txt
  if(NOT path)
    continue()
  endif()
  foreach(cap 70 80 86)
    set(lib aot_cuda${cap}_${model})
    disco_add_model(${lib} MODEL ${path} TARGET cuda${cap})
    add_executable(${lib}_harness aot_gpu_harness.cc)
    target_compile_definitions(${lib}_harness PRIVATE DISCO_AOT_NAME=${lib} DISCO_AOT_HEADER="${lib}.h")
    target_include_directories(${lib}_harness PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${lib}_harness PRIVATE ${lib})  # the .a alone (plus pthread, dl, m)
    set(io ${refs}/${model}.1.input.npy ${refs}/${model}.1.output.npy)
    add_test(NAME ${lib} COMMAND ${lib}_harness ${io})
    set_tests_properties(${lib} PROPERTIES LABELS "aot;cuda")
    if(EXISTS ${cuda_stubs}/libcuda.so)
      add_test(NAME aot_cuda_stub${cap}_${model} COMMAND ${lib}_harness ${io})
      set_tests_properties(aot_cuda_stub${cap}_${model} PROPERTIES LABELS "aot;cuda"
        ENVIRONMENT LD_LIBRARY_PATH=${cuda_stubs})
    endif()
  endforeach()
endforeach()
