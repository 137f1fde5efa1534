# tvm_add_model(): compile an ML model with utvm at build time and add the generated C to a
# target.
#
# Zephyr includes this file through the module's CMakeLists.txt; a plain CMake project can
# include it directly: include(<utvm>/cmake/tvm.cmake), where <utvm> is a checkout of the
# repository or the data directory of the installed package (`utvm info` prints it).
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
#                 [PROFILE]             compile the executor with UTVM_PROFILE (per-operator
#                                       cycles); in Zephyr also CONFIG_UTVM_PROFILE
#                 [TEST_DATA]           also generate tvmgen_<name>_testdata.h: one input and,
#                                       where tflite-micro is installed, the output TFLite
#                                       Micro computes for it
#                 [OFFLOAD <module>...] external modules that take the operators they support
#                                       (plain-c, cmsis-nn); in Zephyr also chosen with
#                                       CONFIG_UTVM_OFFLOAD_PLAIN_C / CONFIG_UTVM_OFFLOAD_CMSIS_NN.
#                                       cmsis-nn reads CMSIS-NN's sources from Zephyr's
#                                       cmsis-nn module (CONFIG_CMSIS_NN builds the library),
#                                       outside Zephyr from CMSIS_NN_DIR, and the caller links
#                                       a CMSIS-NN library (e.g. CMSIS-NN's own CMake project)
#                 [COMPAT tvm-0.18]     tvmgen_<name>.h and a system library as TVM 0.18 generated
#                                       them, for microTVM application code
#                 [TUNING_LOG <file>]   kernel configurations `utvm tune` recorded (JSON lines);
#                                       records for another CPU are ignored with a warning
#                 [OPTIONS <arg>...])   more arguments for `utvm compile`
#
# -DUTVM_OPTIONS=<arg;...> on the CMake command line adds arguments for every model of that
# configure only: it is taken out of the cache once read, so a later configure without it
# compiles without it (also when the build tool re-runs CMake because a CMakeLists.txt or
# prj.conf changed).
#
# The compiler runs as a custom command whose outputs are the generated files. It depends on
# the model, on a stamp file holding the compiler's command line (rewritten only when the
# command line changes), and on the compiler's and runtime's sources: it runs again when one
# of those changes, never on every build.
#
#   tvm_use_runtime(<target>)
#
# gives <target> the runtime's include directories (in Zephyr also the port's, utvm_zephyr.h)
# for code that calls the runtime without a model of its own; tvm_add_model() does it for
# its target. In Zephyr nothing else sees them: they bring generic names (dlpack/,
# tvm/runtime/, tvm/ffi/) that must not reach every library of the image.
#
# After the tvm_add_model() call, in the caller's scope:
#   UTVM_<NAME>_DIR          the Model Library Format directory
#   UTVM_<NAME>_INCLUDE_DIR  where tvmgen_<name>.h is (pool and I/O size macros)
#   UTVM_<NAME>_SOURCES      the generated C sources
#   UTVM_<NAME>_TESTDATA_DIR where tvmgen_<name>_testdata.h is (with TEST_DATA)
# and a custom target tvm_<name> that other targets can depend on.
#
# SPDX-License-Identifier: Apache-2.0

include_guard(GLOBAL)

# Where lib/crt, lib/ext and cmake/ are: the repository, or the installed package's data.
get_filename_component(_utvm_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(UTVM_ROOT "${_utvm_root}" CACHE INTERNAL "root of utvm's runtime and CMake files")
# The Python package: scripts/utvm in a checkout; the directory holding the data otherwise.
if(EXISTS "${UTVM_ROOT}/scripts/utvm/__init__.py")
  set(UTVM_PYTHON_PACKAGE "${UTVM_ROOT}/scripts/utvm" CACHE INTERNAL "utvm's Python package")
else()
  get_filename_component(_utvm_pkg "${UTVM_ROOT}/.." ABSOLUTE)
  set(UTVM_PYTHON_PACKAGE "${_utvm_pkg}" CACHE INTERNAL "utvm's Python package")
endif()

# Python interpreter: Zephyr's (Python3_EXECUTABLE), else PYTHON, else find one.
function(_utvm_python out)
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
function(_utvm_zephyr_cpu out)
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
# An installed package needs no PYTHONPATH: the interpreter imports its own copy.
function(_utvm_env out)
  if(NOT UTVM_PYTHON_PACKAGE STREQUAL "${UTVM_ROOT}/scripts/utvm")
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  if(WIN32)
    set(sep ";")
  else()
    set(sep ":")
  endif()
  set(pythonpath "${UTVM_ROOT}/scripts")
  if(NOT "$ENV{PYTHONPATH}" STREQUAL "")
    string(APPEND pythonpath "${sep}$ENV{PYTHONPATH}")
  endif()
  set(${out} "${CMAKE_COMMAND}" -E env "PYTHONPATH=${pythonpath}" PARENT_SCOPE)
endfunction()

# Whether `utvm compile` has the option (asked once per configure: its --help is cheap).
function(_utvm_compile_accepts python option out)
  get_property(help GLOBAL PROPERTY UTVM_COMPILE_HELP)
  get_property(known GLOBAL PROPERTY UTVM_COMPILE_HELP SET)
  if(NOT known)
    _utvm_env(env)
    execute_process(COMMAND ${env} "${python}" -m utvm compile --help
                    OUTPUT_VARIABLE help ERROR_QUIET RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      set(help "")
    endif()
    set_property(GLOBAL PROPERTY UTVM_COMPILE_HELP "${help}")
  endif()
  # argparse lists an option as "  --opt ARG  help" (or "  --opt  help").
  string(FIND "${help}" " ${option} " pos)
  if(pos GREATER -1)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# The -DUTVM_OPTIONS=... of this configure: read once, then removed from the cache.
function(_utvm_configure_options out)
  get_property(taken GLOBAL PROPERTY UTVM_OPTIONS_OF_THIS_CONFIGURE SET)
  if(NOT taken)
    set(options "")
    if(DEFINED CACHE{UTVM_OPTIONS})
      set(options "$CACHE{UTVM_OPTIONS}")
      unset(UTVM_OPTIONS CACHE)
    endif()
    set_property(GLOBAL PROPERTY UTVM_OPTIONS_OF_THIS_CONFIGURE "${options}")
  endif()
  get_property(options GLOBAL PROPERTY UTVM_OPTIONS_OF_THIS_CONFIGURE)
  set(${out} "${options}" PARENT_SCOPE)
endfunction()

# Writes content to file only when it differs, so that its time stamp changes only then.
function(_utvm_write_if_changed file content)
  if(EXISTS "${file}")
    file(READ "${file}" old)
    if("${old}" STREQUAL "${content}")
      return()
    endif()
  endif()
  file(WRITE "${file}" "${content}")
endfunction()

function(tvm_use_runtime target)
  target_include_directories(${target} PRIVATE "${UTVM_ROOT}/lib/crt/include")
  if(COMMAND zephyr_library AND DEFINED ZEPHYR_BASE)
    target_include_directories(${target} PRIVATE "${UTVM_ROOT}/lib/crt/ports/zephyr")
  endif()
endfunction()

function(tvm_add_model)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "TEST_DATA;PROFILE"
    "NAME;MODEL;TARGET;OUTPUT_DIR;CPU;POOL_SECTION;RUNTIME;TUNING_LOG;COMPAT" "OPTIONS;OFFLOAD")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tvm_add_model: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_NAME OR NOT ARG_MODEL)
    message(FATAL_ERROR "tvm_add_model: NAME and MODEL are required")
  endif()
  if(NOT ARG_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "tvm_add_model: NAME must be a C identifier, got '${ARG_NAME}'")
  endif()
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "tvm_add_model: model file not found: ${model}")
  endif()

  set(zephyr FALSE)
  if(COMMAND zephyr_library AND DEFINED ZEPHYR_BASE)
    set(zephyr TRUE)
    if(NOT CONFIG_UTVM)
      message(FATAL_ERROR "tvm_add_model: set CONFIG_UTVM=y (prj.conf) to use TVM models")
    endif()
  endif()
  if(NOT ARG_TARGET)
    if(zephyr)
      set(ARG_TARGET app)
    else()
      message(FATAL_ERROR "tvm_add_model: TARGET is required outside Zephyr")
    endif()
  endif()
  if(zephyr AND ARG_RUNTIME)
    message(FATAL_ERROR "tvm_add_model: RUNTIME is for plain CMake; in Zephyr the module "
                        "builds the runtime (CONFIG_UTVM)")
  endif()
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/tvm/${ARG_NAME}")
  endif()
  get_filename_component(dir "${ARG_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  if(NOT DEFINED ARG_CPU AND zephyr)
    _utvm_zephyr_cpu(ARG_CPU)
  endif()
  if(NOT DEFINED ARG_POOL_SECTION AND DEFINED CONFIG_UTVM_POOL_SECTION)
    set(ARG_POOL_SECTION "${CONFIG_UTVM_POOL_SECTION}")
  endif()
  if(zephyr AND CONFIG_UTVM_PROFILE)
    set(ARG_PROFILE TRUE)
  endif()

  _utvm_python(python)
  _utvm_env(env)
  set(name "${ARG_NAME}")
  set(args -m utvm compile "${model}" --name "${name}" -o "${dir}")
  if(ARG_CPU)
    # The kernels are portable C that the toolchain compiles with the CPU flags Zephyr
    # chose; a compiler that specialises them for a CPU is told which one.
    _utvm_compile_accepts("${python}" --cpu accepts_cpu)
    if(accepts_cpu)
      list(APPEND args --cpu "${ARG_CPU}")
    endif()
  endif()
  set(compat_sources "")
  if(ARG_COMPAT)
    if(NOT ARG_COMPAT STREQUAL "tvm-0.18")
      message(FATAL_ERROR "tvm_add_model: COMPAT must be tvm-0.18, got '${ARG_COMPAT}'")
    endif()
    list(APPEND args --compat "${ARG_COMPAT}")
    set(compat_sources "${dir}/codegen/host/src/${ARG_NAME}_lib3.c")
  endif()
  set(tuning_log "")
  if(ARG_TUNING_LOG)
    get_filename_component(tuning_log "${ARG_TUNING_LOG}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${tuning_log}")
      message(FATAL_ERROR "tvm_add_model: tuning log not found: ${tuning_log}")
    endif()
    list(APPEND args --tuning-log "${tuning_log}")
  endif()
  _utvm_configure_options(configure_options)
  list(APPEND args ${ARG_OPTIONS} ${configure_options})

  # External modules: `utvm compile --offload <m>` writes codegen/<m>/src/<name>_<m>.c, the
  # glue between the executor and the module's library.
  set(offload ${ARG_OFFLOAD})
  if(zephyr AND CONFIG_UTVM_OFFLOAD_PLAIN_C)
    list(APPEND offload plain-c)
  endif()
  if(zephyr AND CONFIG_UTVM_OFFLOAD_CMSIS_NN)
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
  if("plain-c" IN_LIST offload)
    list(APPEND offload_includes "${UTVM_ROOT}/lib/ext/plain_c/include")
    if(NOT zephyr)
      # In Zephyr the module's library builds lib/ext/plain_c (CONFIG_UTVM_OFFLOAD_PLAIN_C).
      file(GLOB plain_c_sources "${UTVM_ROOT}/lib/ext/plain_c/src/*.c")
      target_sources(${ARG_TARGET} PRIVATE ${plain_c_sources})
    endif()
  endif()

  # The stamp of the options: the command line, one argument per line.
  string(REPLACE ";" "\n" cmdline "${python};${args}")
  _utvm_write_if_changed("${dir}.cmdline" "${cmdline}\n")

  set(src "${dir}/codegen/host/src")
  set(inc "${dir}/codegen/host/include")
  set(sources "${src}/${name}_lib0.c" "${src}/${name}_lib1.c" "${src}/${name}_lib2.c" ${compat_sources}
              ${glue_sources})
  set(outputs "${dir}/.tvm-done" ${sources} "${inc}/tvmgen_${name}.h" "${dir}/metadata.json")

  file(GLOB_RECURSE compiler_sources "${UTVM_PYTHON_PACKAGE}/*.py")

  set(runtime_sources "")
  set(runtime_files "")
  if(ARG_RUNTIME)
    # The Model Library Format carries a copy of lib/crt: copy it again when it changes.
    file(GLOB_RECURSE runtime_files "${UTVM_ROOT}/lib/crt/*.c" "${UTVM_ROOT}/lib/crt/*.h")
    file(GLOB core RELATIVE "${UTVM_ROOT}/lib/crt" "${UTVM_ROOT}/lib/crt/src/*.c")
    # The port's platform hooks only: a port directory may hold programs too (a main()).
    file(GLOB port RELATIVE "${UTVM_ROOT}/lib/crt"
         "${UTVM_ROOT}/lib/crt/ports/${ARG_RUNTIME}/platform_*.c")
    if(NOT port)
      message(FATAL_ERROR "tvm_add_model: no runtime port '${ARG_RUNTIME}' in lib/crt/ports")
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
    DEPENDS "${model}" "${dir}.cmdline" ${tuning_log} ${compiler_sources} ${runtime_files}
    COMMENT "utvm: compiling model ${name} (${model})"
    VERBATIM)

  set(all_sources ${sources} ${runtime_sources})
  set(headers "${inc}/tvmgen_${name}.h")

  if(ARG_TEST_DATA)
    # Beside the Model Library Format directory, which the compiler replaces as a whole.
    set(testdata_dir "${dir}-testdata")
    set(testdata "${testdata_dir}/tvmgen_${name}_testdata.h")
    add_custom_command(
      OUTPUT "${testdata}"
      COMMAND ${env} "${python}" -m utvm.zephyr.testdata "${model}" --name "${name}"
              -o "${testdata}"
      DEPENDS "${model}" "${UTVM_PYTHON_PACKAGE}/zephyr/testdata.py"
      COMMENT "utvm: test data for model ${name} (TFLite Micro reference output)"
      VERBATIM)
    list(APPEND headers "${testdata}")
  endif()

  # Placement of the static pool and per-operator timing: the executor (<name>_lib1.c)
  # honours UTVM_POOL_SECTION and UTVM_PROFILE. Only the generated sources get them.
  if(ARG_POOL_SECTION)
    set_property(SOURCE "${src}/${name}_lib1.c" APPEND PROPERTY
                 COMPILE_DEFINITIONS "UTVM_POOL_SECTION=\"${ARG_POOL_SECTION}\"")
  endif()
  if(ARG_PROFILE)
    set_property(SOURCE "${src}/${name}_lib1.c" APPEND PROPERTY COMPILE_DEFINITIONS UTVM_PROFILE=1)
  endif()

  add_custom_target(tvm_${name} DEPENDS ${outputs} ${headers})
  target_sources(${ARG_TARGET} PRIVATE ${all_sources} ${headers})
  target_include_directories(${ARG_TARGET} PRIVATE "${inc}" ${offload_includes})
  if(zephyr)
    tvm_use_runtime(${ARG_TARGET})
  endif()
  if(ARG_TEST_DATA)
    target_include_directories(${ARG_TARGET} PRIVATE "${testdata_dir}")
  endif()
  if(ARG_RUNTIME)
    target_include_directories(${ARG_TARGET} PRIVATE "${dir}/runtime/include")
  endif()
  add_dependencies(${ARG_TARGET} tvm_${name})

  string(TOUPPER "${name}" NAME)
  set(UTVM_${NAME}_DIR "${dir}" PARENT_SCOPE)
  set(UTVM_${NAME}_INCLUDE_DIR "${inc}" PARENT_SCOPE)
  set(UTVM_${NAME}_SOURCES ${all_sources} PARENT_SCOPE)
  if(ARG_TEST_DATA)
    set(UTVM_${NAME}_TESTDATA_DIR "${testdata_dir}" PARENT_SCOPE)
  endif()
endfunction()
