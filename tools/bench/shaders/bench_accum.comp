#version 450
// "upload 64 KiB + launch": acc[i] += src[i] for i < count (consumes the uploaded data).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1) buffer Acc { uint acc[]; };
layout(push_constant) uniform Push { uint unused; uint count; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.count) acc[i] += src[i];
}
