# hotswap_add_plugin(NAME SOURCES...)
#
# A pass plugin: a shared object (CMake MODULE library, libNAME.so) that
# hotswap-opt -load-pass-plugin=PATH loads (or PassPlugin::load, or the C
# API's hotswap_options_load_pass_plugin). It is compiled like the library
# (C++17, LLVM's definitions, -fno-rtti when LLVM has no RTTI) and linked
# against no hotswap or LLVM library: at load time it binds to the copy in
# the program that loads it (hotswap-opt exports its symbols), so there is
# one copy of every registry, analysis key and LLVM global in the process.
# A source of the plugin that throws C++ exceptions compiles with
# -fexceptions (set_source_files_properties); the loader turns them into
# errors naming the plugin.
#
# HOTSWAP_PLUGIN_API_TARGET names the target giving the headers
# (HotswapOpt::plugin-api in the installed package).
function(hotswap_add_plugin NAME)
  if(NOT ARGN)
    message(FATAL_ERROR "hotswap_add_plugin(${NAME}): no sources")
  endif()
  if(NOT HOTSWAP_PLUGIN_API_TARGET)
    set(HOTSWAP_PLUGIN_API_TARGET HotswapOpt::plugin-api)
  endif()
  add_library(${NAME} MODULE ${ARGN})
  target_link_libraries(${NAME} PRIVATE ${HOTSWAP_PLUGIN_API_TARGET})
  target_compile_features(${NAME} PRIVATE cxx_std_17)
endfunction()
