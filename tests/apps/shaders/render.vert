#version 450
// offscreen_render: positions come in pixels; the push constants give the image size and a
// per-frame offset in pixels.
layout(location = 0) in vec2 in_pos;
layout(location = 1) in vec4 in_color;
layout(location = 0) flat out vec4 color;
layout(push_constant) uniform Params {
    vec2 size;
    vec2 offset;
} pc;

void main() {
    gl_Position = vec4((in_pos + pc.offset) / pc.size * 2.0 - 1.0, 0.0, 1.0);
    color = in_color;
}
