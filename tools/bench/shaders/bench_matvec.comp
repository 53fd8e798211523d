#version 450
// "ml_matvec" row: y = A x for a rows x cols f32 matrix (cols a multiple of 4), one workgroup
// per row, coalesced vec4 reads: bound by the bandwidth of the memory A lives in.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer Matrix { vec4 a[]; };
layout(set = 0, binding = 1) readonly buffer Vector { vec4 x[]; };
layout(set = 0, binding = 2) writeonly buffer Result { float y[]; };
layout(push_constant) uniform Push { uint rows; uint cols; } pc;
shared float partial[256];
void main() {
    uint row = gl_WorkGroupID.x;
    uint t = gl_LocalInvocationID.x;
    uint cols4 = pc.cols / 4;
    float s = 0.0;
    if (row < pc.rows) {
        uint base = row * cols4;
        for (uint k = t; k < cols4; k += 256) s += dot(a[base + k], x[k]);
    }
    partial[t] = s;
    barrier();
    for (uint w = 128; w > 0; w >>= 1) {
        if (t < w) partial[t] += partial[t + w];
        barrier();
    }
    if (t == 0 && row < pc.rows) y[row] = partial[0];
}
