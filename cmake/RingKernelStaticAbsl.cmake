# rk_use_static_absl(): points every absl:: imported target of the current
# directory at its static archive where Debian's package imports the shared
# library, so that binaries carry Abseil with them (GPU machines often have
# none). Used by RingKernel's own build and, unless RINGKERNEL_STATIC_ABSL is
# OFF, by find_package(RingKernel) for the application's binaries too.
function(rk_use_static_absl)
  get_property(_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
  foreach(_t IN LISTS _imported)
    if(_t MATCHES "^absl::")
      get_target_property(_type ${_t} TYPE)
      if(_type STREQUAL "SHARED_LIBRARY")
        get_target_property(_loc ${_t} IMPORTED_LOCATION_NONE)
        if(_loc)
          string(REGEX REPLACE "\\.so(\\.[0-9.]+)?$" ".a" _static "${_loc}")
          if(EXISTS "${_static}")
            set_target_properties(${_t} PROPERTIES IMPORTED_LOCATION_NONE "${_static}" IMPORTED_NO_SONAME TRUE)
            set_property(TARGET ${_t} PROPERTY IMPORTED_SONAME_NONE "")
          endif()
        endif()
      endif()
    endif()
  endforeach()
endfunction()
