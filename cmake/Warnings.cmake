# Our own code builds with warnings as errors; third-party headers come in as SYSTEM.
function(slipstream_strict target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror
    -Wno-missing-field-initializers)
endfunction()
