# A CMake toolchain file for 64-bit ARM Linux with Debian's GNU cross compiler
# (gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu):
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE="$(aotc --cmake-dir)/aarch64-linux-gnu.cmake"
#
# aotc_add_library then generates code for aotc's `aarch64` target. When qemu-aarch64 is
# installed it is the CROSSCOMPILING_EMULATOR, so `ctest` and custom commands run the
# programs built here.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

if(NOT CMAKE_C_COMPILER)
  set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
endif()
if(NOT CMAKE_CXX_COMPILER)
  set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
endif()

set(AOTC_AARCH64_SYSROOT /usr/aarch64-linux-gnu CACHE PATH "Target libraries of the cross compiler")
set(CMAKE_FIND_ROOT_PATH "${AOTC_AARCH64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # programs (aotc, qemu) run on this machine
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

find_program(AOTC_QEMU_AARCH64 qemu-aarch64)
if(AOTC_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${AOTC_QEMU_AARCH64};-L;${AOTC_AARCH64_SYSROOT}")
endif()
