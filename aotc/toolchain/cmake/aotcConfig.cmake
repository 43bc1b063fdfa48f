# aotc's CMake package. Point CMake at it with the directory `aotc --cmake-dir` prints:
#
#   cmake -S . -B build -Daotc_DIR="$(aotc --cmake-dir)"      (or on CMAKE_PREFIX_PATH)
#
#   find_package(aotc REQUIRED)
#   aotc_add_library(mm MODEL matmul.hlo CONFIG matmul.yaml)
#   target_link_libraries(app PRIVATE mm)                      # #include "mm.h"
#
# aotc_add_library(<target> MODEL <file> [CONFIG <file>] [TARGET <aotc target>]
#                  [WEIGHTS bound|fed|file] [NAME <C prefix>] [CFLAGS <flag>...])
#
# runs `aotc compile --emit c,h,d` at build time (the depfile names the model, the config
# and the .npz files the compile read, so editing any of them reruns aotc) and compiles
# the generated C into an ordinary STATIC library: the header's directory is a usage
# requirement, and it links Threads::Threads and libm. With WEIGHTS file the build also
# writes <target>.weights (an output of the same command, built with the library); its
# absolute path is the target's property AOTC_WEIGHTS_FILE, for install() or for the
# program to pass to <prefix>_load_weights.
#
# AOTC_EXECUTABLE (cache) is the aotc program, by default `aotc` found on PATH.

cmake_minimum_required(VERSION 3.20)  # DEPFILE with every generator, CMP0116
include_guard(GLOBAL)

include(CMakeFindDependencyMacro)
find_dependency(Threads)

find_program(AOTC_EXECUTABLE NAMES aotc DOC "The aotc program that aotc_add_library runs")
if(NOT AOTC_EXECUTABLE)
  set(aotc_FOUND FALSE)
  set(aotc_NOT_FOUND_MESSAGE
      "no `aotc` program on PATH: install aotc, or set AOTC_EXECUTABLE to the program to run")
  return()
endif()

# The aotc target name of what CMake builds: `host` unless cross compiling; then the
# compiler's target triple (CMAKE_C_COMPILER_TARGET, as clang and the Android NDK set it),
# else one derived from CMAKE_SYSTEM_NAME and CMAKE_SYSTEM_PROCESSOR.
function(_aotc_default_target out)
  if(NOT CMAKE_CROSSCOMPILING)
    set(${out} host PARENT_SCOPE)
    return()
  endif()
  set(system "${CMAKE_SYSTEM_NAME}")
  set(cpu "${CMAKE_SYSTEM_PROCESSOR}")
  if(CMAKE_C_COMPILER_TARGET)
    # aarch64-none-linux-android24 -> aarch64 + Android; x86_64-pc-linux-gnu -> x86_64 + Linux
    string(REGEX MATCH "^[^-]+" cpu "${CMAKE_C_COMPILER_TARGET}")
    if(CMAKE_C_COMPILER_TARGET MATCHES "android")
      set(system Android)
    elseif(CMAKE_C_COMPILER_TARGET MATCHES "apple|darwin")
      set(system Darwin)
    elseif(CMAKE_C_COMPILER_TARGET MATCHES "linux")
      set(system Linux)
    endif()
  endif()
  string(TOLOWER "${cpu}" cpu)
  if(cpu MATCHES "^(aarch64|arm64)")
    set(arch aarch64)
  elseif(cpu MATCHES "^(x86_64|amd64|x64)$")
    set(arch x86_64)
  elseif(cpu MATCHES "^(armv7|arm$|armhf)")
    set(arch arm)
  elseif(cpu MATCHES "^riscv64")
    set(arch riscv64)
  else()
    message(FATAL_ERROR "aotc_add_library: no aotc target known for processor '${CMAKE_SYSTEM_PROCESSOR}' "
                        "(${CMAKE_SYSTEM_NAME}); pass TARGET (see `aotc compile --help`)")
  endif()
  if(system STREQUAL "Android" AND arch STREQUAL "aarch64")
    set(${out} aarch64-linux-android PARENT_SCOPE)
  elseif(system MATCHES "^(Darwin|iOS)$" AND arch MATCHES "^(aarch64|x86_64)$")
    set(${out} ${arch}-apple-darwin PARENT_SCOPE)
  elseif(system STREQUAL "Linux")
    set(${out} ${arch} PARENT_SCOPE)  # aotc's aliases: aarch64-linux-gnu, x86_64 (x86-64-v3), ...
  else()
    message(FATAL_ERROR "aotc_add_library: no aotc target known for ${arch} on ${system}; pass TARGET "
                        "(see `aotc compile --help`)")
  endif()
endfunction()

# The compiler flags for generated C of aotc target `name`, asked once per configure of
# each target (`aotc cflags`): optimization, numeric flags, ISA flags.
function(_aotc_cflags out name)
  get_property(known GLOBAL PROPERTY _aotc_cflags_${name} SET)
  if(NOT known)
    execute_process(COMMAND "${AOTC_EXECUTABLE}" cflags --target "${name}"
                    OUTPUT_VARIABLE flags ERROR_VARIABLE err RESULT_VARIABLE rc
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "aotc_add_library: `${AOTC_EXECUTABLE} cflags --target ${name}` failed: ${err}")
    endif()
    separate_arguments(flags UNIX_COMMAND "${flags}")
    set_property(GLOBAL PROPERTY _aotc_cflags_${name} "${flags}")
  endif()
  get_property(flags GLOBAL PROPERTY _aotc_cflags_${name})
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

function(aotc_add_library target)
  cmake_parse_arguments(PARSE_ARGV 1 AOTC "" "MODEL;CONFIG;TARGET;WEIGHTS;NAME" "CFLAGS")
  if(AOTC_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "aotc_add_library(${target}): unexpected arguments: ${AOTC_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT AOTC_MODEL)
    message(FATAL_ERROR "aotc_add_library(${target}): MODEL <file> is required")
  endif()
  if(NOT AOTC_WEIGHTS)
    set(AOTC_WEIGHTS bound)
  endif()
  if(NOT AOTC_WEIGHTS MATCHES "^(bound|fed|file)$")
    message(FATAL_ERROR "aotc_add_library(${target}): WEIGHTS ${AOTC_WEIGHTS}: use bound (the config's "
                        "bound parameters frozen into the library), fed (they become arguments) or file "
                        "(written to <target>.weights, loaded at run time)")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "C" IN_LIST languages)
    message(FATAL_ERROR "aotc_add_library(${target}): the generated library is C; enable it with "
                        "project(... LANGUAGES C CXX)")
  endif()
  if(NOT AOTC_TARGET)
    _aotc_default_target(AOTC_TARGET)
  endif()

  get_filename_component(model "${AOTC_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/aotc/${target}")
  set(prefix "${dir}/${target}")
  set(args compile "${model}" -o "${prefix}" --emit c,h,d --target "${AOTC_TARGET}" --weights "${AOTC_WEIGHTS}")
  set(depends "${model}")
  set(outputs "${prefix}.c" "${prefix}.h")
  if(AOTC_WEIGHTS STREQUAL "file")
    list(APPEND outputs "${prefix}.weights")
  endif()
  if(AOTC_CONFIG)
    get_filename_component(config "${AOTC_CONFIG}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND args --config "${config}")
    list(APPEND depends "${config}")
  endif()
  if(AOTC_NAME)
    list(APPEND args --name "${AOTC_NAME}")
  endif()

  cmake_policy(PUSH)
  cmake_policy(SET CMP0116 NEW)  # Ninja reads the depfile's paths as this directory's
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "${AOTC_EXECUTABLE}" ${args}
    DEPENDS ${depends}
    DEPFILE "${prefix}.d"
    COMMENT "aotc: compiling ${AOTC_MODEL} for ${AOTC_TARGET}"
    VERBATIM)
  cmake_policy(POP)

  add_library(${target} STATIC ${outputs})
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${dir}>")
  target_link_libraries(${target} PUBLIC Threads::Threads)
  if(UNIX)
    target_link_libraries(${target} PUBLIC m)
  endif()
  set_target_properties(${target} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF
                        POSITION_INDEPENDENT_CODE ON)
  if(AOTC_WEIGHTS STREQUAL "file")  # built with the library: a source of it that is not compiled
    set_source_files_properties("${prefix}.weights" PROPERTIES HEADER_FILE_ONLY ON)
    set_target_properties(${target} PROPERTIES AOTC_WEIGHTS_FILE "${prefix}.weights")
  endif()
  if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    _aotc_cflags(flags "${AOTC_TARGET}")
    target_compile_options(${target} PRIVATE ${flags})
  endif()
  target_compile_options(${target} PRIVATE ${AOTC_CFLAGS})
endfunction()
