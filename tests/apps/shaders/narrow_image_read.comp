#version 450
// narrow_barriers, graphics_after scenario: reads the rendered RGBA8 image as a storage image
// and writes each pixel, packed and mixed with its coordinates, to `pixels`.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, rgba8) readonly uniform image2D image;
layout(set = 0, binding = 1) writeonly buffer Pixels { uint pixels[]; };
layout(push_constant) uniform Push {
    uint width;
    uint height;
} pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) return;
    uint packed = packUnorm4x8(imageLoad(image, ivec2(p)));
    pixels[p.y * pc.width + p.x] = packed ^ (p.x * 0x9e3779b9u + p.y);
}
