#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { uint value[]; } data;
void main() { data.value[0] += 1u; }
