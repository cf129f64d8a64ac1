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

# cuBLAS regions in AOT libraries (issue #22): bert_layer's MatMuls run through
# disco's cuBLAS glue inside NAME.a (it dlopens the driver and cuBLAS), the
# other kernels on the GPU (cublas,cuda: the driver copies a kernel's result
# back to the host before a cuBLAS step and marks the step's result for the
# next kernel to copy up) or on the CPU (cublas,host). Same harness, same
# checks: without a GPU a clean error naming CUDA; with one, PyTorch's output.
aot_test_model(bert_layer path)
if(path)
  foreach(variant "cuda86;cuda" "host;host")
    list(GET variant 0 target)
    list(GET variant 1 kernels)
    set(lib aot_cublas_${target}_bert_layer)
    disco_add_model(${lib} MODEL ${path} TARGET ${target} BACKENDS cublas ${kernels})
    add_executable(${lib}_harness aot_gpu_harness.cc)
    target_compile_definitions(${lib}_harness PRIVATE DISCO_AOT_NAME=${lib} DISCO_AOT_HEADER="${lib}.h")
    target_include_directories(${lib}_harness PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${lib}_harness PRIVATE ${lib})
    set(io ${refs}/bert_layer.1.input.npy ${refs}/bert_layer.1.output.npy)
    add_test(NAME ${lib} COMMAND ${lib}_harness ${io})
    set_tests_properties(${lib} PROPERTIES LABELS "aot;cuda")
    if(EXISTS ${cuda_stubs}/libcuda.so)
      add_test(NAME ${lib}_stub COMMAND ${lib}_harness ${io})
      set_tests_properties(${lib}_stub PROPERTIES LABELS "aot;cuda" ENVIRONMENT LD_LIBRARY_PATH=${cuda_stubs})
    endif()
  endforeach()
endif()
