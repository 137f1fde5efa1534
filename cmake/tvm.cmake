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
#                 [POOLS <pool>:<region>...]  workspace pools in order of preference (`utvm compile
#                                       --pool`): <region> is a number of bytes or, in Zephyr,
#                                       the label of a devicetree node (e.g. dtcm, sram2): its
#                                       size (dt_reg_size) bounds the pool, and a node with
#                                       zephyr,memory-region places the pool in that region's
#                                       linker section. In Zephyr also CONFIG_UTVM_POOLS.
#                 [FLASH <region>]      bytes (or, in Zephyr, a node label; default there: the
#                                       chosen zephyr,flash) the constants must fit in
#                 [OPTIONS <arg>...])   more arguments for `utvm compile`
#
# With POOLS or FLASH the model is compiled when CMake configures (again only when the model
# or the command line changes) and the configure fails with one message when a pool, or the
# constants, would not fit; UTVM_<NAME>_POOLS then lists "<pool>:<bytes>:<capacity>:<section>".
#
#   tvm_add_model_group(NAME <group> MODELS <file>... [TARGET <target>] [OUTPUT_DIR <dir>]
#                       [CPU <cpu>] [POOL_SECTION <sec>] [RUNTIME <port>]
#                       [KEEP <model>:<output>...] [OPTIONS <arg>...])
#
# compiles several models that run one after the other into one workspace pool
# (`utvm compile --shared-pool`): tvmgen_<group>.h gives TVMGEN_<GROUP>_POOL_SIZE, the largest
# of their needs; each model keeps its own tvmgen_<model>.h (<model>: the file name as a C
# identifier). KEEP keeps an output alive while the later models run (with --io-in-pool in
# OPTIONS it lives in the pool and their plans leave it alone). Sets UTVM_<GROUP>_DIR,
# UTVM_<GROUP>_SOURCES and the custom target tvm_<group>.
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

# The bytes of a memory region and the linker section that places data in it: <spec> is a
# number of bytes (decimal or 0x...), or in Zephyr the label of a devicetree node, read with
# Zephyr's devicetree CMake API (dt_nodelabel, dt_reg_size; dt_prop of zephyr,memory-region,
# the name Zephyr's linker script gives the region's output section). Section "" : none.
function(_utvm_region spec out_bytes out_section)
  set(section "")
  if(spec MATCHES "^(0x[0-9A-Fa-f]+|[0-9]+)$")
    math(EXPR bytes "${spec}")
  elseif(COMMAND dt_nodelabel AND COMMAND dt_reg_size)
    dt_nodelabel(path NODELABEL "${spec}")
    if(NOT path)
      message(FATAL_ERROR "tvm_add_model: no devicetree node labelled '${spec}' on this board")
    endif()
    dt_reg_size(bytes PATH "${path}")
    if(NOT bytes)
      message(FATAL_ERROR "tvm_add_model: devicetree node '${spec}' (${path}) has no reg size")
    endif()
    dt_prop(section PATH "${path}" PROPERTY "zephyr,memory-region")
    if(NOT section)  # no such property: the pool stays in the default RAM section
      set(section "")
    endif()
    # A region that is the image's own RAM (chosen zephyr,sram, as DTCM is on Zephyr 3.4's
    # mps3_an547): its memory-region section would lie over the same addresses as .data,
    # .bss and the stacks (the image locked up before its boot banner); .bss is there already.
    if(section AND COMMAND dt_chosen)
      dt_chosen(sram_path PROPERTY "zephyr,sram")
      if(sram_path STREQUAL path)
        message(STATUS "tvm_add_model: '${spec}' is this board's zephyr,sram: the pool stays in .bss, "
                       "which is there already")
        set(section "")
      endif()
    endif()
  else()
    message(FATAL_ERROR "tvm_add_model: '${spec}' is not a number of bytes (devicetree node labels "
                        "need Zephyr)")
  endif()
  set(${out_bytes} "${bytes}" PARENT_SCOPE)
  set(${out_section} "${section}" PARENT_SCOPE)
endfunction()

# The fit check of tvm_add_model(... POOLS/FLASH): compiles the model now (unless the outputs
# are newer than the model and the command line), so that a pool that does not fit its region
# (the compiler's exit 2 and its one line) or constants larger than the flash stop the
# configure with one message. <out> gets "<pool>:<bytes>:<capacity>:<section>" per pool.
function(_utvm_fit_check name dir model flash_bytes pool_report out)
  set(command ${ARGN})
  if(NOT EXISTS "${dir}/.tvm-done" OR "${model}" IS_NEWER_THAN "${dir}/.tvm-done"
     OR "${dir}.cmdline" IS_NEWER_THAN "${dir}/.tvm-done")
    file(REMOVE "${dir}/.tvm-done")
    execute_process(COMMAND ${command} --json RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      string(STRIP "${err}" err)
      string(REGEX REPLACE "^.*\n" "" err "${err}")
      string(REGEX REPLACE "^error: " "" err "${err}")
      message(FATAL_ERROR "tvm_add_model(${name}): does not fit: ${err}")
    endif()
    file(TOUCH "${dir}/.tvm-done")
  endif()
  file(READ "${dir}/metadata.json" meta)
  string(JSON constants GET "${meta}" modules ${name} memory functions main 0 constants_size_bytes)
  if(NOT "${flash_bytes}" STREQUAL "" AND constants GREATER flash_bytes)
    message(FATAL_ERROR "tvm_add_model(${name}): does not fit: the constants need ${constants} bytes, "
                        "the flash region has ${flash_bytes}")
  endif()
  string(JSON count LENGTH "${meta}" modules ${name} pools)
  set(pools "")
  set(summary "")
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON pool GET "${meta}" modules ${name} pools ${i} name)
    string(JSON bytes GET "${meta}" modules ${name} pools ${i} size)
    foreach(entry IN LISTS pool_report)
      if(entry MATCHES "^${pool}:([^:]*):(.*)$")
        list(APPEND pools "${pool}:${bytes}:${CMAKE_MATCH_1}:${CMAKE_MATCH_2}")
        string(APPEND summary " ${pool} ${bytes}/${CMAKE_MATCH_1}")
      endif()
    endforeach()
  endforeach()
  if(NOT "${flash_bytes}" STREQUAL "")
    string(APPEND summary "; constants ${constants}/${flash_bytes}")
  endif()
  message(STATUS "utvm: ${name} fits (used/region bytes):${summary}")
  set(${out} "${pools}" PARENT_SCOPE)
endfunction()

# With <port> (RUNTIME): the runtime's core and the port's platform hooks, as the Model Library
# Format in <dir> carries them (<out_sources>), and lib/crt's files they are copied from
# (<out_files>, dependencies of the compile); otherwise both empty.
function(_utvm_runtime_sources port dir out_sources out_files)
  set(runtime_sources "")
  set(runtime_files "")
  if(port)
    # The Model Library Format carries a copy of lib/crt: copy it again when it changes.
    file(GLOB_RECURSE runtime_files "${UTVM_ROOT}/lib/crt/*.c" "${UTVM_ROOT}/lib/crt/*.h")
    file(GLOB core RELATIVE "${UTVM_ROOT}/lib/crt" "${UTVM_ROOT}/lib/crt/src/*.c")
    # The port's platform hooks only: a port directory may hold programs too (a main()).
    file(GLOB port_files RELATIVE "${UTVM_ROOT}/lib/crt" "${UTVM_ROOT}/lib/crt/ports/${port}/platform_*.c")
    if(NOT port_files)
      message(FATAL_ERROR "tvm_add_model: no runtime port '${port}' in lib/crt/ports")
    endif()
    foreach(f IN LISTS core port_files)
      list(APPEND runtime_sources "${dir}/runtime/${f}")
    endforeach()
  endif()
  set(${out_sources} "${runtime_sources}" PARENT_SCOPE)
  set(${out_files} "${runtime_files}" PARENT_SCOPE)
endfunction()

# The custom command that runs the compiler (the rest of the arguments) and produces <outputs>,
# <dir>/.tvm-done among them, when one of <depends> or the compiler's sources changes.
function(_utvm_compile_command dir outputs what depends)
  file(GLOB_RECURSE compiler_sources "${UTVM_PYTHON_PACKAGE}/*.py")
  # .tvm-done is written last: a compile that fails leaves it missing, so the next build
  # runs the compiler again. The outputs are touched: a compiler that keeps the time stamp
  # of a file it did not change (or copies the runtime with its time stamps) must not make
  # them look older than the model, or Ninja would compile the model on every build.
  set(produced ${outputs})
  list(REMOVE_ITEM produced "${dir}/.tvm-done")
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "${CMAKE_COMMAND}" -E rm -f "${dir}/.tvm-done"
    COMMAND ${ARGN}
    COMMAND "${CMAKE_COMMAND}" -E touch_nocreate ${produced}
    COMMAND "${CMAKE_COMMAND}" -E touch "${dir}/.tvm-done"
    DEPENDS ${depends} ${compiler_sources}
    COMMENT "utvm: compiling ${what}"
    VERBATIM)
endfunction()

# The arguments tvm_add_model() and tvm_add_model_group() share, in the caller's scope: sets
# zephyr (TRUE in a Zephyr build) and dir (the absolute output directory), and defaults
# ARG_TARGET (Zephyr: app), ARG_CPU (Zephyr's CPU) and ARG_POOL_SECTION (Kconfig).
macro(_utvm_common_arguments fn)
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${fn}: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${fn}: NAME must be a C identifier, got '${ARG_NAME}'")
  endif()
  set(zephyr FALSE)
  if(COMMAND zephyr_library AND DEFINED ZEPHYR_BASE)
    set(zephyr TRUE)
    if(NOT CONFIG_UTVM)
      message(FATAL_ERROR "${fn}: set CONFIG_UTVM=y (prj.conf) to use TVM models")
    endif()
  endif()
  if(NOT ARG_TARGET)
    if(zephyr)
      set(ARG_TARGET app)
    else()
      message(FATAL_ERROR "${fn}: TARGET is required outside Zephyr")
    endif()
  endif()
  if(zephyr AND ARG_RUNTIME)
    message(FATAL_ERROR "${fn}: RUNTIME is for plain CMake; in Zephyr the module "
                        "builds the runtime (CONFIG_UTVM)")
  endif()
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/tvm/${ARG_NAME}")
  endif()
  get_filename_component(dir "${ARG_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  if(NOT DEFINED ARG_CPU AND zephyr)
    _utvm_zephyr_cpu(ARG_CPU)
    # Helium needs an FP register file: with CONFIG_FPU=n Zephyr compiles with
    # -mfloat-abi=soft, where GCC defines no __ARM_FEATURE_MVE, and the Helium kernels run
    # their scalar C form (Zephyr 3.4.99 mps3_an547: KWS 4 times slower than the generic one)
    if(ARG_CPU MATCHES "^cortex-m(52|55|85)$" AND (NOT CONFIG_FPU OR "${GCC_M_CPU}" MATCHES "nomve"))
      message(WARNING "${fn}: ${ARG_CPU} without CONFIG_FPU=y (or with +nomve): no Helium (MVE) "
                      "instructions, the Helium kernels run as scalar C; set CONFIG_FPU=y")
    endif()
  endif()
  if(NOT DEFINED ARG_POOL_SECTION AND DEFINED CONFIG_UTVM_POOL_SECTION)
    set(ARG_POOL_SECTION "${CONFIG_UTVM_POOL_SECTION}")
  endif()
endmacro()

# The custom target tvm_<name> that produces <outputs>; <target> gets the sources, the include
# directories (in Zephyr also the runtime's) and depends on it.
function(_utvm_attach target name outputs sources includes)
  add_custom_target(tvm_${name} DEPENDS ${outputs})
  target_sources(${target} PRIVATE ${sources})
  target_include_directories(${target} PRIVATE ${includes})
  if(COMMAND zephyr_library AND DEFINED ZEPHYR_BASE)
    tvm_use_runtime(${target})
  endif()
  add_dependencies(${target} tvm_${name})
endfunction()

function(tvm_use_runtime target)
  target_include_directories(${target} PRIVATE "${UTVM_ROOT}/lib/crt/include")
  if(COMMAND zephyr_library AND DEFINED ZEPHYR_BASE)
    target_include_directories(${target} PRIVATE "${UTVM_ROOT}/lib/crt/ports/zephyr")
  endif()
endfunction()

function(tvm_add_model)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "TEST_DATA;PROFILE"
    "NAME;MODEL;TARGET;OUTPUT_DIR;CPU;POOL_SECTION;RUNTIME;TUNING_LOG;COMPAT;FLASH" "OPTIONS;OFFLOAD;POOLS")
  if(NOT ARG_NAME OR NOT ARG_MODEL)
    message(FATAL_ERROR "tvm_add_model: NAME and MODEL are required")
  endif()
  _utvm_common_arguments(tvm_add_model)
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "tvm_add_model: model file not found: ${model}")
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

  # Pools in memory regions: --pool <pool>:<bytes> each, the region's section for the executor.
  if(NOT ARG_POOLS AND zephyr AND NOT "${CONFIG_UTVM_POOLS}" STREQUAL "")
    string(REPLACE " " ";" ARG_POOLS "${CONFIG_UTVM_POOLS}")
  endif()
  set(pool_defines "")
  set(pool_report "")
  foreach(spec IN LISTS ARG_POOLS)
    if(NOT spec MATCHES "^([A-Za-z_][A-Za-z0-9_]*):(.+)$")
      message(FATAL_ERROR "tvm_add_model: POOLS entry '${spec}' is not <pool>:<bytes or node label>")
    endif()
    set(pool "${CMAKE_MATCH_1}")
    set(region "${CMAKE_MATCH_2}")
    _utvm_region("${region}" bytes section)
    list(APPEND args --pool "${pool}:${bytes}")
    string(TOUPPER "${pool}" POOL)
    if(section)
      list(APPEND pool_defines "UTVM_POOL_${POOL}_SECTION=\"${section}\"")
      # Zephyr's startup zeroes .bss and copies .data; a devicetree region's own section gets
      # neither. The pool needs neither (scratch: each run writes before it reads, the state
      # kept between runs stays in .bss), but the memory must answer before the first run.
      message(NOTICE "tvm_add_model(${ARG_NAME}): pool '${pool}' is in devicetree region "
                     "'${region}' (section ${section}), which Zephyr's startup neither zeroes "
                     "nor loads: the pool is scratch and needs neither, but the application must make "
                     "that memory usable (power, clock, memory controller, MPU) before the first "
                     "tvmgen_${ARG_NAME}_run()")
    endif()
    list(APPEND pool_report "${pool}:${bytes}:${section}")
  endforeach()
  set(flash_bytes "")
  if(ARG_FLASH)
    _utvm_region("${ARG_FLASH}" flash_bytes flash_section)
  elseif(ARG_POOLS AND COMMAND dt_chosen)
    dt_chosen(flash_path PROPERTY "zephyr,flash")
    if(flash_path)
      dt_reg_size(flash_bytes PATH "${flash_path}")
    endif()
  endif()

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

  _utvm_runtime_sources("${ARG_RUNTIME}" "${dir}" runtime_sources runtime_files)
  list(APPEND outputs ${runtime_sources})

  if(ARG_POOLS OR ARG_FLASH)
    _utvm_fit_check("${name}" "${dir}" "${model}" "${flash_bytes}" "${pool_report}" pools_out ${env} "${python}" ${args})
  endif()

  _utvm_compile_command("${dir}" "${outputs}" "model ${name} (${model})"
                        "${model};${dir}.cmdline;${tuning_log};${runtime_files}" ${env} "${python}" ${args})

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
  if(pool_defines)
    set_property(SOURCE "${src}/${name}_lib1.c" APPEND PROPERTY COMPILE_DEFINITIONS ${pool_defines})
  endif()
  if(zephyr AND CONFIG_UTVM_POOL_NOINIT)
    set_property(SOURCE "${src}/${name}_lib1.c" APPEND PROPERTY COMPILE_DEFINITIONS UTVM_POOL_NOINIT=1)
  endif()

  set(includes "${inc}" ${offload_includes})
  if(ARG_TEST_DATA)
    list(APPEND includes "${testdata_dir}")
  endif()
  if(ARG_RUNTIME)
    list(APPEND includes "${dir}/runtime/include")
  endif()
  _utvm_attach(${ARG_TARGET} ${name} "${outputs};${headers}" "${all_sources};${headers}" "${includes}")

  string(TOUPPER "${name}" NAME)
  set(UTVM_${NAME}_DIR "${dir}" PARENT_SCOPE)
  set(UTVM_${NAME}_INCLUDE_DIR "${inc}" PARENT_SCOPE)
  set(UTVM_${NAME}_SOURCES ${all_sources} PARENT_SCOPE)
  if(ARG_TEST_DATA)
    set(UTVM_${NAME}_TESTDATA_DIR "${testdata_dir}" PARENT_SCOPE)
  endif()
  if(ARG_POOLS OR ARG_FLASH)
    set(UTVM_${NAME}_POOLS "${pools_out}" PARENT_SCOPE)
  endif()
endfunction()

# The C name utvm gives a model file (utvm.importer.c_identifier): its stem, characters other
# than letters, digits and _ replaced by _, leading/trailing _ removed, m_ before a digit.
function(_utvm_model_name file out)
  get_filename_component(stem "${file}" NAME_WE)
  string(REGEX REPLACE "[^0-9A-Za-z_]" "_" ident "${stem}")
  string(REGEX REPLACE "^_+|_+$" "" ident "${ident}")
  if(ident STREQUAL "")
    set(ident model)
  elseif(ident MATCHES "^[0-9]")
    set(ident "m_${ident}")
  endif()
  set(${out} "${ident}" PARENT_SCOPE)
endfunction()

function(tvm_add_model_group)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME;TARGET;OUTPUT_DIR;CPU;POOL_SECTION;RUNTIME"
    "MODELS;KEEP;OPTIONS")
  if(NOT ARG_NAME OR NOT ARG_MODELS)
    message(FATAL_ERROR "tvm_add_model_group: NAME and MODELS are required")
  endif()
  _utvm_common_arguments(tvm_add_model_group)

  set(group "${ARG_NAME}")
  set(models "")
  set(names "")
  set(sources "${dir}/src/${group}_pool.c")
  set(headers "${dir}/include/tvmgen_${group}.h")
  set(includes "${dir}/include")
  foreach(file IN LISTS ARG_MODELS)
    get_filename_component(model "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${model}")
      message(FATAL_ERROR "tvm_add_model_group: model file not found: ${model}")
    endif()
    _utvm_model_name("${model}" name)
    if(name IN_LIST names)
      message(FATAL_ERROR "tvm_add_model_group: two models are named ${name}; rename a file")
    endif()
    list(APPEND models "${model}")
    list(APPEND names "${name}")
    set(src "${dir}/${name}/codegen/host/src")
    list(APPEND sources "${src}/${name}_lib0.c" "${src}/${name}_lib1.c" "${src}/${name}_lib2.c")
    list(APPEND headers "${dir}/${name}/codegen/host/include/tvmgen_${name}.h")
    list(APPEND includes "${dir}/${name}/codegen/host/include")
  endforeach()

  _utvm_python(python)
  _utvm_env(env)
  set(args -m utvm compile ${models} --shared-pool --group "${group}" -o "${dir}")
  if(ARG_CPU)
    list(APPEND args --cpu "${ARG_CPU}")
  endif()
  foreach(keep IN LISTS ARG_KEEP)
    list(APPEND args --keep "${keep}")
  endforeach()
  _utvm_configure_options(configure_options)
  list(APPEND args ${ARG_OPTIONS} ${configure_options})
  string(REPLACE ";" "\n" cmdline "${python};${args}")
  _utvm_write_if_changed("${dir}.cmdline" "${cmdline}\n")

  list(GET names 0 first)
  _utvm_runtime_sources("${ARG_RUNTIME}" "${dir}/${first}" runtime_sources runtime_files)
  set(outputs "${dir}/.tvm-done" ${sources} ${headers} "${dir}/group.json" ${runtime_sources})
  _utvm_compile_command("${dir}" "${outputs}" "model group ${group} (${names})"
                        "${models};${dir}.cmdline;${runtime_files}" ${env} "${python}" ${args})

  if(ARG_POOL_SECTION)
    set_property(SOURCE "${dir}/src/${group}_pool.c" APPEND PROPERTY
                 COMPILE_DEFINITIONS "UTVM_POOL_SECTION=\"${ARG_POOL_SECTION}\"")
  endif()
  if(ARG_RUNTIME)
    list(APPEND includes "${dir}/${first}/runtime/include")
  endif()
  _utvm_attach(${ARG_TARGET} ${group} "${outputs}" "${sources};${runtime_sources};${headers}" "${includes}")

  string(TOUPPER "${group}" GROUP)
  set(UTVM_${GROUP}_DIR "${dir}" PARENT_SCOPE)
  set(UTVM_${GROUP}_MODELS ${names} PARENT_SCOPE)
  set(UTVM_${GROUP}_SOURCES ${sources} ${runtime_sources} PARENT_SCOPE)
endfunction()
