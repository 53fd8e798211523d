#version 450
// The stress programs' one step: transforms a thread's 64 words in place (the order of steps
// matters, so submission order is checked too) and stamps the submission's tag into its
// marker slot, which the threads that wait for it compare once they see it done.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint d[]; };
layout(set = 0, binding = 1) buffer Markers { uint marker[]; };
layout(push_constant) uniform Params {
    uint mul;
    uint add;
    uint slot;
    uint tag;
} pc;

void main() {
    uint i = gl_LocalInvocationID.x;
    uint v = d[i] * pc.mul + (pc.add ^ i);
    d[i] = (v << 7) | (v >> 25);
    if (i == 0) marker[pc.slot] = pc.tag;
}
