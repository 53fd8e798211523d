#version 450
// fusion_hazards `wide`: one launch over 26 storage buffers, bindings 0..25 of one set. Word j
// of every binding is mixed into h (in binding order), then word j of each binding is rewritten
// from its old value, h and its binding index: the result depends on which buffer sits at
// which binding, and on all 26 of them. A grid-stride loop covers all n words.
layout(local_size_x = 64) in;
#define BUF(k) layout(set = 0, binding = k) buffer B##k { uint v[]; } b##k;
BUF(0) BUF(1) BUF(2) BUF(3) BUF(4) BUF(5) BUF(6) BUF(7) BUF(8) BUF(9) BUF(10) BUF(11) BUF(12)
BUF(13) BUF(14) BUF(15) BUF(16) BUF(17) BUF(18) BUF(19) BUF(20) BUF(21) BUF(22) BUF(23) BUF(24) BUF(25)
layout(push_constant) uniform Params {
    uint n;
    uint step;
} pc;

#define MIX(k) h = (h ^ b##k.v[j]) * 16777619u;
#define UPD(k) { uint x = b##k.v[j] * 2654435761u + (h ^ (uint(k) * 0x9e3779b9u)); b##k.v[j] = x ^ (x >> 13); }

void main() {
    uint total = gl_NumWorkGroups.x * 64u;
    for (uint j = gl_GlobalInvocationID.x; j < pc.n; j += total) {
        uint h = 2166136261u ^ pc.step;
        MIX(0) MIX(1) MIX(2) MIX(3) MIX(4) MIX(5) MIX(6) MIX(7) MIX(8) MIX(9) MIX(10) MIX(11) MIX(12)
        MIX(13) MIX(14) MIX(15) MIX(16) MIX(17) MIX(18) MIX(19) MIX(20) MIX(21) MIX(22) MIX(23) MIX(24) MIX(25)
        UPD(0) UPD(1) UPD(2) UPD(3) UPD(4) UPD(5) UPD(6) UPD(7) UPD(8) UPD(9) UPD(10) UPD(11) UPD(12)
        UPD(13) UPD(14) UPD(15) UPD(16) UPD(17) UPD(18) UPD(19) UPD(20) UPD(21) UPD(22) UPD(23) UPD(24) UPD(25)
    }
}
