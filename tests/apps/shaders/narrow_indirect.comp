#version 450
// narrow_barriers, indirect scenario, dispatched by vkCmdDispatchIndirect: each invocation
// writes a hash of its index, of the group count it really ran with and of a tag to
// out_words[base + index].
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform Push {
    uint tag;
    uint base;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint h = i * 2654435761u + gl_NumWorkGroups.x * 40503u + pc.tag;
    h ^= h >> 15;
    out_words[pc.base + i] = h;
}
