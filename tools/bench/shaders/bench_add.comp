#version 450
// "launch" rows: a tiny kernel. v[i] += value for i < count.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint v[]; };
layout(push_constant) uniform Push { uint value; uint count; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.count) v[i] += pc.value;
}
