# tvm_add_model(): compile an ML model with utvm at build time and add the generated C to a
# target.
#
# Zephyr includes this file through the module's CMakeLists.txt; a plain CMake project can
# include it directly (include(<utvm>/cmake/tvm.cmake)).
#
#   tvm_add_model(NAME <name> MODEL <file.tflite|file.onnx>
#                 [TARGET <target>]     target that gets the sources; default "app" in Zephyr
#                 [OUTPUT_DIR <dir>]    default ${CMAKE_CURRENT_BINARY_DIR}/tvm/<name>
#                 [CPU <cpu>]           e.g. cortex-m4; default: the CPU Zephyr compiles for
#                 [POOL_SECTION <sec>]  linker section of the static pool (UTVM_POOL_SECTION
#                                       when compiling the executor); default: Kconfig
#                 [RUNTIME <port>]      also compile the Model Library Format's runtime and
#                                       port <port> (host, baremetal) into <target>; not
#                                       needed in Zephyr, where the module builds the runtime
#                 [TEST_DATA]           also generate tvmgen_<name>_testdata.h: one input and
#                                       the output TFLite Micro computes for it
#                 [OFFLOAD <module>...] external modules that take the operators they support
#                                       (plain-c, cmsis-nn); in Zephyr also chosen with
#                                       CONFIG_TVM_OFFLOAD_PLAIN_C / CONFIG_TVM_OFFLOAD_CMSIS_NN.
#                                       cmsis-nn reads CMSIS-NN's sources from Zephyr's
#                                       cmsis-nn module (CONFIG_CMSIS_NN builds the library),
#                                       outside Zephyr from CMSIS_NN_DIR, and the caller links
#                                       a CMSIS-NN library (e.g. CMSIS-NN's own CMake project)
#                 [OPTIONS <arg>...])   more arguments for `utvm compile`
#
# The compiler runs as a custom command whose outputs are the generated files. It depends on
# the model, on a stamp file holding the compiler's command line (rewritten only when the
# command line changes), and on the compiler's and runtime's sources: it runs again when one
# of those changes, never on every build.
#
# After the call, in the caller's scope:
#   TVM_<NAME>_DIR          the Model Library Format directory
#   TVM_<NAME>_INCLUDE_DIR  where tvmgen_<name>.h is (pool and I/O size macros)
#   TVM_<NAME>_SOURCES      the generated C sources
#   TVM_<NAME>_TESTDATA_DIR where tvmgen_<name>_testdata.h is (with TEST_DATA)
# and a custom target tvm_<name> that other targets can depend on.
#
# SPDX-License-Identifier: Apache-2.0

include_guard(GLOBAL)

set(TVM_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." CACHE INTERNAL "root of the utvm repository")
get_filename_component(TVM_ROOT "${TVM_ROOT}" ABSOLUTE)

# Python interpreter: Zephyr's (Python3_EXECUTABLE), else PYTHON, else find one.
function(_tvm_python out)
  if(DEFINED Python3_EXECUTABLE AND NOT "${Python3_EXECUTABLE}" STREQUAL "")
    set(py "${Python3_EXECUTABLE}")
  elseif(DEFINED PYTHON AND NOT "${PYTHON}" STREQUAL "")
    set(py "${PYTHON}")
  else()
    find_package(Python3 3.10 REQUIRED COMPONENTS Interpreter)
    set(py "${Python3_EXECUTABLE}")
  endif()
  set(${out} "${py}" PARENT_SCOPE)
endfunction()

# The CPU the Zephyr image is compiled for, as gcc's -mcpu spells it, or "" (host, POSIX
# architecture, or not Zephyr). Taken from the toolchain settings Zephyr derived from
# Kconfig (GCC_M_CPU), else from the CONFIG_CPU_* symbols themselves.
function(_tvm_zephyr_cpu out)
  set(cpu "")
  if(DEFINED GCC_M_CPU AND NOT "${GCC_M_CPU}" STREQUAL "")
    string(REGEX REPLACE "\\+.*$" "" cpu "${GCC_M_CPU}")
  else()
    foreach(core IN ITEMS M0 M0PLUS M1 M3 M4 M7 M23 M33 M55 M85)
      if(CONFIG_CPU_CORTEX_${core})
        string(TOLOWER "cortex-${core}" cpu)
      endif()
    endforeach()
  endif()
  set(${out} "${cpu}" PARENT_SCOPE)
endfunction()

# `cmake -E env PYTHONPATH=<repo>/scripts[:$PYTHONPATH]`: runs the compiler of this checkout.
function(_tvm_env out)
  if(WIN32)
    set(sep ";")
  else()
    set(sep ":")
  endif()
  set(pythonpath "${TVM_ROOT}/scripts")
  if(NOT "$ENV{PYTHONPATH}" STREQUAL "")
    string(APPEND pythonpath "${sep}$ENV{PYTHONPATH}")
  endif()
  set(${out} "${CMAKE_COMMAND}" -E env "PYTHONPATH=${pythonpath}" PARENT_SCOPE)
endfunction()

# Whether `utvm compile` has the option (asked once per configure: its --help is cheap).
function(_tvm_compile_accepts python option out)
  get_property(help GLOBAL PROPERTY TVM_COMPILE_HELP)
  get_property(known GLOBAL PROPERTY TVM_COMPILE_HELP SET)
  if(NOT known)
    _tvm_env(env)
    execute_process(COMMAND ${env} "${python}" -m utvm compile --help
                    OUTPUT_VARIABLE help ERROR_QUIET RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      set(help "")
    endif()
    set_property(GLOBAL PROPERTY TVM_COMPILE_HELP "${help}")
  endif()
  # argparse lists an option as "  --opt ARG  help" (or "  --opt  help").
  string(FIND "${help}" " ${option} " pos)
  if(pos GREATER -1)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# Writes content to file only when it differs, so that its time stamp changes only then.
function(_tvm_write_if_changed file content)
  if(EXISTS "${file}")
    file(READ "${file}" old)
    if("${old}" STREQUAL "${content}")
      return()
    endif()
  endif()
  file(WRITE "${file}" "${content}")
endfunction()

function(tvm_add_model)
  cmake_parse_arguments(PARSE_ARGV 0 TVM "TEST_DATA"
    "NAME;MODEL;TARGET;OUTPUT_DIR;CPU;POOL_SECTION;RUNTIME" "OPTIONS;OFFLOAD")
  if(TVM_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tvm_add_model: unknown arguments: ${TVM_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TVM_NAME OR NOT TVM_MODEL)
    message(FATAL_ERROR "tvm_add_model: NAME and MODEL are required")
  endif()
  if(NOT TVM_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "tvm_add_model: NAME must be a C identifier, got '${TVM_NAME}'")
  endif()
  get_filename_component(model "${TVM_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "tvm_add_model: model file not found: ${model}")
  endif()

  set(zephyr FALSE)
  if(COMMAND zephyr_library AND DEFINED ZEPHYR_BASE)
    set(zephyr TRUE)
    if(NOT CONFIG_TVM)
      message(FATAL_ERROR "tvm_add_model: set CONFIG_TVM=y (prj.conf) to use TVM models")
    endif()
  endif()
  if(NOT TVM_TARGET)
    if(zephyr)
      set(TVM_TARGET app)
    else()
      message(FATAL_ERROR "tvm_add_model: TARGET is required outside Zephyr")
    endif()
  endif()
  if(zephyr AND TVM_RUNTIME)
    message(FATAL_ERROR "tvm_add_model: RUNTIME is for plain CMake; in Zephyr the module "
                        "builds the runtime (CONFIG_TVM)")
  endif()
  if(NOT TVM_OUTPUT_DIR)
    set(TVM_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/tvm/${TVM_NAME}")
  endif()
  get_filename_component(dir "${TVM_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  if(NOT DEFINED TVM_CPU AND zephyr)
    _tvm_zephyr_cpu(TVM_CPU)
  endif()
  if(NOT DEFINED TVM_POOL_SECTION AND DEFINED CONFIG_TVM_POOL_SECTION)
    set(TVM_POOL_SECTION "${CONFIG_TVM_POOL_SECTION}")
  endif()

  _tvm_python(python)
  _tvm_env(env)
  set(name "${TVM_NAME}")
  set(args -m utvm compile "${model}" --name "${name}" -o "${dir}")
  if(TVM_CPU)
    # The kernels are portable C that the toolchain compiles with the CPU flags Zephyr
    # chose; a compiler that specialises them for a CPU is told which one.
    _tvm_compile_accepts("${python}" --cpu accepts_cpu)
    if(accepts_cpu)
      list(APPEND args --cpu "${TVM_CPU}")
    endif()
  endif()
  list(APPEND args ${TVM_OPTIONS})

  # External modules: `utvm compile --offload <m>` writes codegen/<m>/src/<name>_<m>.c, the
  # glue between the executor and the module's library.
  set(offload ${TVM_OFFLOAD})
  if(zephyr AND CONFIG_TVM_OFFLOAD_PLAIN_C)
    list(APPEND offload plain-c)
  endif()
  if(zephyr AND CONFIG_TVM_OFFLOAD_CMSIS_NN)
    list(APPEND offload cmsis-nn)
  endif()
  list(REMOVE_DUPLICATES offload)
  set(glue_sources "")
  set(offload_includes "")
  foreach(module IN LISTS offload)
    if(NOT module MATCHES "^(plain-c|cmsis-nn)$")
      message(FATAL_ERROR "tvm_add_model: unknown OFFLOAD module '${module}' (plain-c, cmsis-nn)")
    endif()
    string(REPLACE "-" "_" module_c "${module}")
    list(APPEND args --offload ${module})
    list(APPEND glue_sources "${dir}/codegen/${module_c}/src/${name}_${module_c}.c")
  endforeach()
  if("cmsis-nn" IN_LIST offload)
    if(zephyr)
      set(cmsis_nn_dir "${ZEPHYR_CMSIS_NN_MODULE_DIR}")
    else()
      set(cmsis_nn_dir "${CMSIS_NN_DIR}")
    endif()
    if(NOT cmsis_nn_dir OR NOT EXISTS "${cmsis_nn_dir}/Include/arm_nnfunctions.h")
      message(FATAL_ERROR "tvm_add_model: OFFLOAD cmsis-nn needs CMSIS-NN's sources: in Zephyr the "
                          "cmsis-nn module (west.yml), elsewhere -DCMSIS_NN_DIR=<CMSIS-NN checkout>")
    endif()
    list(APPEND args --cmsis-nn-dir "${cmsis_nn_dir}")
    list(APPEND offload_includes "${cmsis_nn_dir}/Include")
  endif()
  if("plain-c" IN_LIST offload AND NOT zephyr)
    # In Zephyr the module builds lib/ext/plain_c (CONFIG_TVM_OFFLOAD_PLAIN_C).
    file(GLOB plain_c_sources "${TVM_ROOT}/lib/ext/plain_c/src/*.c")
    target_sources(${TVM_TARGET} PRIVATE ${plain_c_sources})
    list(APPEND offload_includes "${TVM_ROOT}/lib/ext/plain_c/include")
  endif()

  # The stamp of the options: the command line, one argument per line.
  string(REPLACE ";" "\n" cmdline "${python};${args}")
  _tvm_write_if_changed("${dir}.cmdline" "${cmdline}\n")

  set(src "${dir}/codegen/host/src")
  set(inc "${dir}/codegen/host/include")
  set(sources "${src}/${name}_lib0.c" "${src}/${name}_lib1.c" "${src}/${name}_lib2.c" ${glue_sources})
  set(outputs "${dir}/.tvm-done" ${sources} "${inc}/tvmgen_${name}.h" "${dir}/metadata.json")

  file(GLOB_RECURSE compiler_sources "${TVM_ROOT}/scripts/utvm/*.py")

  set(runtime_sources "")
  set(runtime_files "")
  if(TVM_RUNTIME)
    # The Model Library Format carries a copy of lib/crt: copy it again when it changes.
    file(GLOB_RECURSE runtime_files "${TVM_ROOT}/lib/crt/*.c" "${TVM_ROOT}/lib/crt/*.h")
    file(GLOB core RELATIVE "${TVM_ROOT}/lib/crt" "${TVM_ROOT}/lib/crt/src/*.c")
    # The port's platform hooks only: a port directory may hold programs too (a main()).
    file(GLOB port RELATIVE "${TVM_ROOT}/lib/crt"
         "${TVM_ROOT}/lib/crt/ports/${TVM_RUNTIME}/platform_*.c")
    if(NOT port)
      message(FATAL_ERROR "tvm_add_model: no runtime port '${TVM_RUNTIME}' in lib/crt/ports")
    endif()
    foreach(f IN LISTS core port)
      list(APPEND runtime_sources "${dir}/runtime/${f}")
    endforeach()
    list(APPEND outputs ${runtime_sources})
  endif()

  # .tvm-done is written last: a compile that fails leaves it missing, so the next build
  # runs the compiler again. The outputs are touched: a compiler that keeps the time stamp
  # of a file it did not change (or copies the runtime with its time stamps) must not make
  # them look older than the model, or Ninja would compile the model on every build.
  set(produced ${outputs})
  list(REMOVE_ITEM produced "${dir}/.tvm-done")
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "${CMAKE_COMMAND}" -E rm -f "${dir}/.tvm-done"
    COMMAND ${env} "${python}" ${args}
    COMMAND "${CMAKE_COMMAND}" -E touch_nocreate ${produced}
    COMMAND "${CMAKE_COMMAND}" -E touch "${dir}/.tvm-done"
    DEPENDS "${model}" "${dir}.cmdline" ${compiler_sources} ${runtime_files}
    COMMENT "utvm: compiling model ${name} (${model})"
    VERBATIM)

  set(all_sources ${sources} ${runtime_sources})
  set(headers "${inc}/tvmgen_${name}.h")

  if(TVM_TEST_DATA)
    # Beside the Model Library Format directory, which the compiler replaces as a whole.
    set(testdata_dir "${dir}-testdata")
    set(testdata "${testdata_dir}/tvmgen_${name}_testdata.h")
    add_custom_command(
      OUTPUT "${testdata}"
      COMMAND ${env} "${python}" -m utvm.zephyr.testdata "${model}" --name "${name}"
              -o "${testdata}"
      DEPENDS "${model}" "${TVM_ROOT}/scripts/utvm/zephyr/testdata.py"
      COMMENT "utvm: test data for model ${name} (TFLite Micro reference output)"
      VERBATIM)
    list(APPEND headers "${testdata}")
  endif()

  # Placement of the static pool: the executor (<name>_lib1.c) honours UTVM_POOL_SECTION.
  if(TVM_POOL_SECTION)
    set_property(SOURCE "${src}/${name}_lib1.c" APPEND PROPERTY
                 COMPILE_DEFINITIONS "UTVM_POOL_SECTION=\"${TVM_POOL_SECTION}\"")
  endif()

  add_custom_target(tvm_${name} DEPENDS ${outputs} ${headers})
  target_sources(${TVM_TARGET} PRIVATE ${all_sources} ${headers})
  target_include_directories(${TVM_TARGET} PRIVATE "${inc}" ${offload_includes})
  if(TVM_TEST_DATA)
    target_include_directories(${TVM_TARGET} PRIVATE "${testdata_dir}")
  endif()
  if(TVM_RUNTIME)
    target_include_directories(${TVM_TARGET} PRIVATE "${dir}/runtime/include")
  endif()
  add_dependencies(${TVM_TARGET} tvm_${name})

  string(TOUPPER "${name}" NAME)
  set(TVM_${NAME}_DIR "${dir}" PARENT_SCOPE)
  set(TVM_${NAME}_INCLUDE_DIR "${inc}" PARENT_SCOPE)
  set(TVM_${NAME}_SOURCES ${all_sources} PARENT_SCOPE)
  if(TVM_TEST_DATA)
    set(TVM_${NAME}_TESTDATA_DIR "${testdata_dir}" PARENT_SCOPE)
  endif()
endfunction()
