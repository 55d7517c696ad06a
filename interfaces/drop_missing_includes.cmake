# Injected after project() (CMAKE_PROJECT_INCLUDE) by scripts/build_interfaces.sh.
#
# The ROS 2 wheels export their CMake targets with include directories of the machine
# they were built on (under /opt/python/...); CMake refuses an imported target whose
# INTERFACE_INCLUDE_DIRECTORIES does not exist. At the end of the configure step, every
# imported target of this directory keeps only the include directories that exist.
function(_rtd_drop_missing_include_directories)
  get_directory_property(_targets IMPORTED_TARGETS)
  foreach(_target IN LISTS _targets)
    get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _dirs)
      continue()
    endif()
    set(_kept "")
    foreach(_dir IN LISTS _dirs)
      if(_dir MATCHES "^\\$<" OR EXISTS "${_dir}")
        list(APPEND _kept "${_dir}")
      endif()
    endforeach()
    set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_kept}")
  endforeach()
endfunction()
cmake_language(DEFER CALL _rtd_drop_missing_include_directories)
