#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
// elide_step.comp's step through buffer device addresses (SPIR-V capability
// PhysicalStorageBufferAddresses): no descriptor says which memory it touches.
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint w[]; };
layout(push_constant) uniform Params {
    uvec2 src;  // addresses as low, high words: no Int64 capability needed
    uvec2 dst;
    uint n;
    uint salt;
} pc;

void main() {
    Words src = Words(pc.src), dst = Words(pc.dst);
    for (uint j = gl_GlobalInvocationID.x; j < pc.n; j += gl_NumWorkGroups.x * 64u)
        dst.w[j] = (src.w[j] * 2654435761u) ^ (pc.salt + j);
}
