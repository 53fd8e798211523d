# slipstream_add_shader(<target> <file.comp|vert|frag> <symbol>)
# Compiles GLSL to SPIR-V with glslangValidator and emits a header
# `<build>/shaders/<symbol>.h` holding `static const uint32_t <symbol>[]`,
# then adds that folder to <target>'s include path.
find_program(GLSLANG_VALIDATOR glslangValidator REQUIRED)

function(slipstream_add_shader target source symbol)
  get_filename_component(src "${source}" ABSOLUTE)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/shaders")
  set(out "${dir}/${symbol}.h")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${dir}"
    COMMAND ${GLSLANG_VALIDATOR} --quiet --target-env vulkan1.1 --vn ${symbol} -o "${out}" "${src}"
    DEPENDS "${src}"
    COMMENT "SPIR-V ${symbol}"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
  target_include_directories(${target} PRIVATE "${dir}")
endfunction()
