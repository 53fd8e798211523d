#include "capture/spirv_capabilities.h"

namespace slipstream::capture {

namespace {
constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kHeaderWords = 5;
constexpr uint32_t kOpCapability = 17, kOpExtension = 10, kOpExtInstImport = 11;
constexpr uint32_t kCapabilityAddresses = 4;
constexpr uint32_t kCapabilityPhysicalStorageBufferAddresses = 5347;  // ...EXT has the same value
}  // namespace

bool spirv_reaches_any_memory(const uint32_t* code, size_t size) {
    const size_t words = size / 4;
    if (!code || words < kHeaderWords || code[0] != kMagic) return true;
    // The logical layout puts every OpCapability first, then extensions and imports: the scan
    // ends at the first other instruction.
    for (size_t i = kHeaderWords; i < words;) {
        const uint32_t count = code[i] >> 16, opcode = code[i] & 0xffff;
        if (count == 0 || i + count > words) return true;
        if (opcode == kOpCapability) {
            if (count < 2) return true;
            const uint32_t capability = code[i + 1];
            if (capability == kCapabilityPhysicalStorageBufferAddresses || capability == kCapabilityAddresses) return true;
        } else if (opcode != kOpExtension && opcode != kOpExtInstImport) {
            return false;
        }
        i += count;
    }
    return false;
}

}  // namespace slipstream::capture
