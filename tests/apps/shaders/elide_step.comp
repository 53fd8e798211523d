#version 450
// One step of elide_barriers: dst from src, word by word, so a chain of steps that hands its
// data from buffer to buffer gives the right result only in order.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Params {
    uint n;
    uint salt;
} pc;

void main() {
    for (uint j = gl_GlobalInvocationID.x; j < pc.n; j += gl_NumWorkGroups.x * 64u)
        dst[j] = (src[j] * 2654435761u) ^ (pc.salt + j);
}
