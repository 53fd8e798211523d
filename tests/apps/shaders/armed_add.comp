#version 450
// armed_resubmit's kernel: dst[i] += kFactor * (add + src[i]) for each element i < n that the
// dispatch reaches (one invocation an element: a smaller dispatch leaves the rest as they are).
// The factor is a specialization constant, so a pipeline created again can differ from the one
// it replaces under the same pipeline layout.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kFactor = 1u;
layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1) buffer Dst { uint dst[]; };
layout(push_constant) uniform Params {
    uint n;
    uint add;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) dst[i] += kFactor * (pc.add + src[i]);
}
