# HotswapOptRewrite.cmake - rewrite a HIP target's file after it is built.
# Part of the installed HotswapOpt package (HotswapOptConfig.cmake includes
# it); it runs the package's own hotswap-opt (HotswapOpt::hotswap-opt).
#
#   hotswap_rewrite(TARGET <target> PASSES <pipeline> [OUTPUT <path>]
#                   [OPTIONS <hotswap-opt flags>...])
#
# Adds a POST_BUILD step to <target> (a shared library, an executable or a
# module built from HIP sources): every time it is linked, hotswap-opt runs
# <pipeline> (the text of -passes=, e.g. "trampoline,stub-syms") on every
# code object of the file, in place by default (atomically; a second run
# changes nothing), or writing <path> instead. OPTIONS are passed through
# (e.g. --keep-going). A failure fails the build.
function(hotswap_rewrite)
  cmake_parse_arguments(HR "" "TARGET;PASSES;OUTPUT" "OPTIONS" ${ARGN})
  if(HR_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hotswap_rewrite: unknown arguments: ${HR_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT HR_TARGET OR NOT TARGET ${HR_TARGET})
    message(FATAL_ERROR "hotswap_rewrite: TARGET must name a target (got '${HR_TARGET}')")
  endif()
  if(NOT HR_PASSES)
    message(FATAL_ERROR "hotswap_rewrite: PASSES is required (e.g. trampoline,stub-syms)")
  endif()
  get_target_property(Type ${HR_TARGET} TYPE)
  if(NOT Type MATCHES "^(SHARED_LIBRARY|MODULE_LIBRARY|EXECUTABLE)$")
    message(FATAL_ERROR "hotswap_rewrite: '${HR_TARGET}' is a ${Type}; only "
      "linked files (shared libraries, modules, executables) hold finished "
      "code objects")
  endif()
  if(HR_OUTPUT)
    get_filename_component(Dir "${HR_OUTPUT}" DIRECTORY)
    set(Where -o "${HR_OUTPUT}")
    set(Comment "hotswap-opt ${HR_PASSES}: ${HR_TARGET} -> ${HR_OUTPUT}")
    add_custom_command(TARGET ${HR_TARGET} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E make_directory "${Dir}" VERBATIM)
  else()
    set(Where -i)
    set(Comment "hotswap-opt ${HR_PASSES}: ${HR_TARGET} (in place)")
  endif()
  add_custom_command(TARGET ${HR_TARGET} POST_BUILD
    COMMAND HotswapOpt::hotswap-opt "-passes=${HR_PASSES}" ${HR_OPTIONS}
            $<TARGET_FILE:${HR_TARGET}> ${Where}
    COMMENT "${Comment}"
    VERBATIM)
endfunction()
