// Barrier elision's proof (capture/capture_footprint.h, footprint_walk.h, resource_registry.h,
// barrier_elision.h): footprints compared by VkDeviceMemory and byte range, so aliasing
// buffers and images meet; whole-size ranges resolved through the buffer's size; only
// read-read overlap allowed; everything the registry cannot bound unknown; and the barrier in
// front of a capture compared against every capture since the last barrier recorded.
#include "capture/barrier_elision.h"
#include "capture/footprint_walk.h"
#include "capture/spirv_capabilities.h"
#include "capture_commands.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace slipstream;
using namespace slipstream::capture;

namespace {
template <typename H>
H handle(uint64_t n) {
    return reinterpret_cast<H>(uintptr_t(n));
}

// SPIR-V: the header, the given capabilities, then OpMemoryModel.
std::vector<uint32_t> spirv(std::vector<uint32_t> capabilities) {
    std::vector<uint32_t> words = {0x07230203, 0x00010500, 0, 100, 0};
    for (uint32_t c : capabilities) {
        words.push_back(2u << 16 | 17);  // OpCapability
        words.push_back(c);
    }
    words.push_back(3u << 16 | 14);  // OpMemoryModel Logical GLSL450
    words.push_back(0);
    words.push_back(1);
    return words;
}

// A device of plain and imported memory, buffers and images over it, set layouts, sets and
// pipelines: the objects every case below names.
class Elision : public ::testing::Test {
public:  // the case table's lambdas build with these
    static constexpr uint64_t kM1 = 1, kM2 = 2, kImported = 3;
    // Buffers (256 bytes each unless named): A at M1+0, B at M1+128 (aliases A), E at M1+256
    // (touches A), D at M1+1024, C at M2+0, S sparse at M2+4096, X in imported memory, U never bound.
    static constexpr uint64_t kA = 10, kB = 11, kC = 12, kD = 13, kE = 14, kS = 15, kX = 16, kU = 17;
    static constexpr uint64_t kImg1 = 30, kImg2 = 31, kImg3 = 32, kView1 = 40, kView2 = 41, kView3 = 42;
    static constexpr uint64_t kStorage = 50, kUniform = 51, kUab = 52, kPartial = 53, kTwo = 54, kAccel = 55;
    static constexpr uint64_t kPlainModule = 60, kAddressModule = 61;
    static constexpr uint64_t kPlainPipeline = 70, kAddressPipeline = 71;
    static constexpr uint64_t kPool = 80;

    void SetUp() override {
        VkMemoryAllocateInfo plain{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        plain.allocationSize = 1 << 20;
        o.memory_allocated(handle<VkDeviceMemory>(kM1), plain);
        o.memory_allocated(handle<VkDeviceMemory>(kM2), plain);
        VkImportMemoryFdInfoKHR import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR};
        VkMemoryAllocateInfo imported = plain;
        imported.pNext = &import;
        o.memory_allocated(handle<VkDeviceMemory>(kImported), imported);

        buffer(kA, kM1, 0);
        buffer(kB, kM1, 128);
        buffer(kE, kM1, 256);
        buffer(kD, kM1, 1024);
        buffer(kC, kM2, 0);
        buffer(kS, kM2, 4096, VK_BUFFER_CREATE_SPARSE_BINDING_BIT);
        buffer(kX, kImported, 0);
        VkBufferCreateInfo unbound{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        unbound.size = 256;
        o.buffer_created(handle<VkBuffer>(kU), unbound);

        image(kImg1, kView1, kM2, 8192, 4096);
        image(kImg2, kView2, kM2, 10240, 4096);  // overlaps kImg1's last 2 KiB
        image(kImg3, kView3, kM2, 65536, 4096);

        layout(kStorage, {{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1}});
        layout(kUniform, {{0, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1}});
        layout(kUab, {{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1}}, VK_DESCRIPTOR_SET_LAYOUT_CREATE_UPDATE_AFTER_BIND_POOL_BIT);
        layout(kPartial, {{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1}}, 0, VK_DESCRIPTOR_BINDING_PARTIALLY_BOUND_BIT);
        layout(kTwo, {{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1}, {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1}});
        layout(kAccel, {{0, VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR, 1}});

        const std::vector<uint32_t> shader = spirv({1}), addresses = spirv({1, 5347});
        VkShaderModuleCreateInfo m{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        m.codeSize = shader.size() * 4;
        m.pCode = shader.data();
        r.shader_module_created(handle<VkShaderModule>(kPlainModule), m);
        m.codeSize = addresses.size() * 4;
        m.pCode = addresses.data();
        r.shader_module_created(handle<VkShaderModule>(kAddressModule), m);
        pipeline(kPlainPipeline, kPlainModule);
        pipeline(kAddressPipeline, kAddressModule);
    }

    void buffer(uint64_t b, uint64_t memory, uint64_t offset, VkBufferCreateFlags flags = 0) {
        VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        info.size = 256;
        info.flags = flags;
        o.buffer_created(handle<VkBuffer>(b), info);
        o.buffer_bound(handle<VkBuffer>(b), handle<VkDeviceMemory>(memory), offset, true);
    }
    void image(uint64_t i, uint64_t view, uint64_t memory, uint64_t offset, uint64_t size) {
        VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
        o.image_created(handle<VkImage>(i), info);
        o.image_bound(handle<VkImage>(i), handle<VkDeviceMemory>(memory), offset, size, true);
        VkImageViewCreateInfo v{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
        v.image = handle<VkImage>(i);
        r.image_view_created(handle<VkImageView>(view), v);
    }
    void layout(uint64_t l, std::vector<VkDescriptorSetLayoutBinding> bindings, VkDescriptorSetLayoutCreateFlags flags = 0,
                VkDescriptorBindingFlags binding_flags = 0) {
        VkDescriptorSetLayoutCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        std::vector<VkDescriptorBindingFlags> all(bindings.size(), binding_flags);
        VkDescriptorSetLayoutBindingFlagsCreateInfo f{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_BINDING_FLAGS_CREATE_INFO};
        f.bindingCount = uint32_t(all.size());
        f.pBindingFlags = all.data();
        if (binding_flags) info.pNext = &f;
        info.flags = flags;
        info.bindingCount = uint32_t(bindings.size());
        info.pBindings = bindings.data();
        r.set_layout_created(handle<VkDescriptorSetLayout>(l), info);
    }
    void pipeline(uint64_t p, uint64_t module) {
        VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        info.stage.module = handle<VkShaderModule>(module);
        const VkPipeline made = handle<VkPipeline>(p);
        r.compute_pipelines_created(1, &info, &made);
    }
    // A new set of layout `l` whose binding 0 holds `buffer` [offset, +range).
    VkDescriptorSet set(uint64_t l, uint64_t buffer, VkDeviceSize offset = 0, VkDeviceSize range = VK_WHOLE_SIZE,
                        VkDescriptorType type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER) {
        const VkDescriptorSet s = allocate(l);
        write(s, 0, buffer, offset, range, type);
        return s;
    }
    VkDescriptorSet allocate(uint64_t l) {
        const VkDescriptorSet s = handle<VkDescriptorSet>(next_set_++);
        const VkDescriptorSetLayout layout = handle<VkDescriptorSetLayout>(l);
        VkDescriptorSetAllocateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
        info.descriptorPool = handle<VkDescriptorPool>(kPool);
        info.descriptorSetCount = 1;
        info.pSetLayouts = &layout;
        r.sets_allocated(info, &s);
        return s;
    }
    void write(VkDescriptorSet s, uint32_t binding, uint64_t buffer, VkDeviceSize offset, VkDeviceSize range,
               VkDescriptorType type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, uint32_t count = 1) {
        std::vector<VkDescriptorBufferInfo> infos(count, {handle<VkBuffer>(buffer), offset, range});
        VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w.dstSet = s;
        w.dstBinding = binding;
        w.descriptorCount = count;
        w.descriptorType = type;
        w.pBufferInfo = infos.data();
        r.sets_updated(1, &w, 0, nullptr);
    }

    // Footprint of a capture that `record` fills (begun at the registry's current epoch, or at `epoch`).
    Footprint capture(const std::function<void(CommandCapture&)>& record, uint64_t epoch = ~0ull, bool trust = false) {
        CommandCapture c;
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        c.begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY, &bi);
        record(c);
        c.end(VK_SUCCESS);
        return footprint_of(c, r, epoch == ~0ull ? r.update_epoch() : epoch, trust);
    }
    // A dispatch with `set` bound, by `pipeline`.
    Footprint dispatch(VkDescriptorSet set, uint64_t pipeline = kPlainPipeline, uint64_t epoch = ~0ull, bool trust = false) {
        return capture(
            [&](CommandCapture& c) {
                CmdBindPipeline(c, CommandId::CmdBindPipeline, VK_PIPELINE_BIND_POINT_COMPUTE, handle<VkPipeline>(pipeline));
                CmdBindDescriptorSets(c, CommandId::CmdBindDescriptorSets, VK_PIPELINE_BIND_POINT_COMPUTE,
                                      handle<VkPipelineLayout>(90), 0, 1, &set, 0, nullptr);
                CmdDispatch(c, CommandId::CmdDispatch, 1, 1, 1);
            },
            epoch, trust);
    }
    Footprint fill(uint64_t buffer, VkDeviceSize offset, VkDeviceSize size) {
        return capture([&](CommandCapture& c) {
            CmdFillBuffer(c, CommandId::CmdFillBuffer, handle<VkBuffer>(buffer), offset, size, 0);
        });
    }
    Footprint clear(uint64_t image) {
        return capture([&](CommandCapture& c) {
            const VkClearColorValue color{};
            const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
            CmdClearColorImage(c, CommandId::CmdClearColorImage, handle<VkImage>(image), VK_IMAGE_LAYOUT_GENERAL,
                               &color, 1, &range);
        });
    }

    ObjectRecord o;  // before r, which reads it
    ResourceRegistry r{o};
    uint64_t next_set_ = 1000;
};

struct PairCase {
    const char* name;
    std::function<Footprint(Elision&)> first, second;
    bool conflict;
};
}  // namespace

TEST_F(Elision, PairsOfCapturesConflictOnlyWhereAWriteMeetsTheSameMemory) {
    using E = Elision;
    const std::vector<PairCase> cases = {
        {"disjoint memory", [](E& e) { return e.dispatch(e.set(kStorage, kA)); },
         [](E& e) { return e.dispatch(e.set(kStorage, kC)); }, false},
        {"disjoint ranges of one memory", [](E& e) { return e.dispatch(e.set(kStorage, kA)); },
         [](E& e) { return e.dispatch(e.set(kStorage, kD)); }, false},
        {"touching ranges", [](E& e) { return e.dispatch(e.set(kStorage, kA)); },
         [](E& e) { return e.dispatch(e.set(kStorage, kE)); }, false},
        {"aliasing buffers of one memory", [](E& e) { return e.dispatch(e.set(kStorage, kA)); },
         [](E& e) { return e.dispatch(e.set(kStorage, kB)); }, true},
        {"aliasing, narrow ranges that miss", [](E& e) { return e.dispatch(e.set(kStorage, kA, 0, 64)); },
         [](E& e) { return e.dispatch(e.set(kStorage, kB, 0, 64)); }, false},
        {"read-read of aliasing buffers",
         [](E& e) { return e.dispatch(e.set(kUniform, kA, 0, VK_WHOLE_SIZE, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER)); },
         [](E& e) { return e.dispatch(e.set(kUniform, kB, 0, VK_WHOLE_SIZE, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER)); }, false},
        {"read-write of aliasing buffers",
         [](E& e) { return e.dispatch(e.set(kUniform, kA, 0, VK_WHOLE_SIZE, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER)); },
         [](E& e) { return e.dispatch(e.set(kStorage, kB)); }, true},
        {"whole-size descriptor against a fill at its end", [](E& e) { return e.dispatch(e.set(kStorage, kA, 64)); },
         [](E& e) { return e.fill(kA, 240, 16); }, true},
        {"whole-size fill against an aliasing buffer", [](E& e) { return e.fill(kB, 0, VK_WHOLE_SIZE); },
         [](E& e) { return e.dispatch(e.set(kStorage, kA, 0, 64)); }, false},
        {"whole-size fill reaching an aliasing range", [](E& e) { return e.fill(kA, 0, VK_WHOLE_SIZE); },
         [](E& e) { return e.dispatch(e.set(kStorage, kB, 64, 16)); }, true},
        {"fills of disjoint buffers", [](E& e) { return e.fill(kA, 0, VK_WHOLE_SIZE); },
         [](E& e) { return e.fill(kC, 0, VK_WHOLE_SIZE); }, false},
        {"dynamic descriptor reaches the buffer's end",
         [](E& e) { return e.dispatch(e.set(kStorage, kA, 0, 16, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC)); },
         [](E& e) { return e.fill(kA, 200, 4); }, true},
        {"images overlapping in memory", [](E& e) { return e.clear(kImg1); }, [](E& e) { return e.clear(kImg2); }, true},
        {"images apart", [](E& e) { return e.clear(kImg1); }, [](E& e) { return e.clear(kImg3); }, false},
        {"image and a buffer of other memory", [](E& e) { return e.clear(kImg1); },
         [](E& e) { return e.fill(kA, 0, VK_WHOLE_SIZE); }, false},
        {"update-after-bind set", [](E& e) { return e.dispatch(e.set(kUab, kA)); },
         [](E& e) { return e.dispatch(e.set(kStorage, kC)); }, true},
        {"partially bound set", [](E& e) { return e.dispatch(e.set(kPartial, kA)); },
         [](E& e) { return e.dispatch(e.set(kStorage, kC)); }, true},
        {"buffer device addresses", [](E& e) { return e.dispatch(e.set(kStorage, kA), kAddressPipeline); },
         [](E& e) { return e.dispatch(e.set(kStorage, kC)); }, true},
        {"unknown pipeline", [](E& e) { return e.dispatch(e.set(kStorage, kA), 77); },
         [](E& e) { return e.dispatch(e.set(kStorage, kC)); }, true},
        {"sparse buffer", [](E& e) { return e.fill(kS, 0, 4); }, [](E& e) { return e.fill(kA, 0, 4); }, true},
        {"imported memory", [](E& e) { return e.fill(kX, 0, 4); }, [](E& e) { return e.fill(kA, 0, 4); }, true},
        {"unbound buffer", [](E& e) { return e.fill(kU, 0, 4); }, [](E& e) { return e.fill(kA, 0, 4); }, true},
        {"set never allocated", [](E& e) { return e.dispatch(handle<VkDescriptorSet>(5)); },
         [](E& e) { return e.fill(kA, 0, 4); }, true},
        {"acceleration structure",
         [](E& e) { return e.dispatch(e.set(kAccel, kA, 0, VK_WHOLE_SIZE, VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR)); },
         [](E& e) { return e.fill(kA, 0, 4); }, true},
        {"set updated after the command buffer began",
         [](E& e) {
             const VkDescriptorSet s = e.set(kStorage, kC);
             const uint64_t begun = e.r.update_epoch();
             e.write(s, 0, kD, 0, VK_WHOLE_SIZE);
             return e.dispatch(s, kPlainPipeline, begun);
         },
         [](E& e) { return e.fill(kA, 0, 4); }, true},
        {"event command", [](E& e) {
             return e.capture([](CommandCapture& c) { CmdSetEvent(c, CommandId::CmdSetEvent, handle<VkEvent>(3), 0); });
         },
         [](E& e) { return e.fill(kA, 0, 4); }, true},
    };
    for (const PairCase& c : cases) {
        const Footprint a = c.first(*this), b = c.second(*this);
        EXPECT_EQ(a.conflicts_with(b), c.conflict) << c.name;
        EXPECT_EQ(b.conflicts_with(a), c.conflict) << c.name << " (reversed)";
    }
}

TEST_F(Elision, TrustUnknownTakesHiddenSetsAndAddressShadersAtFaceValue) {
    // The test-only mode of VK_SLIPSTREAM_ELIDE_PROOF=trust-unknown: what the suite's failure
    // proofs use to show that the unknown cases are what keeps their barriers.
    const Footprint other = dispatch(set(kStorage, kC));
    EXPECT_TRUE(dispatch(set(kUab, kA)).conflicts_with(other));
    EXPECT_FALSE(dispatch(set(kUab, kA), kPlainPipeline, ~0ull, true).conflicts_with(other));
    EXPECT_FALSE(dispatch(set(kStorage, kA), kAddressPipeline, ~0ull, true).conflicts_with(other));
}

TEST_F(Elision, WritesCopiesAndTemplatesFollowTheSetContents) {
    // A write of two descriptors starting at binding 0 goes on into binding 1.
    const VkDescriptorSet two = allocate(kTwo);
    write(two, 0, kC, 0, VK_WHOLE_SIZE, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2);
    EXPECT_EQ(dispatch(two).ranges().size(), 1u);
    EXPECT_FALSE(dispatch(two).conflicts_with(fill(kA, 0, 4)));
    write(two, 1, kA, 0, VK_WHOLE_SIZE);
    EXPECT_TRUE(dispatch(two).conflicts_with(fill(kA, 0, 4)));

    // A copy brings the source's descriptor.
    const VkDescriptorSet copy = set(kStorage, kC);
    VkCopyDescriptorSet c{VK_STRUCTURE_TYPE_COPY_DESCRIPTOR_SET};
    c.srcSet = two;
    c.srcBinding = 1;
    c.dstSet = copy;
    c.descriptorCount = 1;
    r.sets_updated(0, nullptr, 1, &c);
    EXPECT_TRUE(dispatch(copy).conflicts_with(fill(kA, 0, 4)));

    // A template update, as its entries say.
    struct Data {
        uint64_t pad;
        VkDescriptorBufferInfo info;
    } data{0, {handle<VkBuffer>(kA), 0, VK_WHOLE_SIZE}};
    VkDescriptorUpdateTemplateEntry entry{0, 0, 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, offsetof(Data, info), sizeof(Data)};
    VkDescriptorUpdateTemplateCreateInfo t{VK_STRUCTURE_TYPE_DESCRIPTOR_UPDATE_TEMPLATE_CREATE_INFO};
    t.descriptorUpdateEntryCount = 1;
    t.pDescriptorUpdateEntries = &entry;
    t.templateType = VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET;
    o.template_created(handle<VkDescriptorUpdateTemplate>(7), t);
    const VkDescriptorSet templated = set(kStorage, kC);
    EXPECT_FALSE(dispatch(templated).conflicts_with(fill(kA, 0, 4)));
    r.set_updated_with_template(templated, handle<VkDescriptorUpdateTemplate>(7), &data);
    EXPECT_TRUE(dispatch(templated).conflicts_with(fill(kA, 0, 4)));
    // An unknown template leaves the set unknown.
    r.set_updated_with_template(templated, handle<VkDescriptorUpdateTemplate>(8), &data);
    EXPECT_TRUE(dispatch(templated).unknown());

    // A freed set, or one of a reset pool, is not known any more.
    const VkDescriptorSet gone = set(kStorage, kC);
    r.sets_freed(1, &gone);
    EXPECT_TRUE(dispatch(gone).unknown());
    const VkDescriptorSet pooled = set(kStorage, kC);
    r.pool_emptied(handle<VkDescriptorPool>(kPool));
    EXPECT_TRUE(dispatch(pooled).unknown());
}

TEST_F(Elision, PushDescriptorsCopiesAndIndirectParametersCount) {
    const VkDescriptorBufferInfo info{handle<VkBuffer>(kB), 0, VK_WHOLE_SIZE};
    const Footprint pushed = capture([&](CommandCapture& c) {
        VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w.descriptorCount = 1;
        w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w.pBufferInfo = &info;
        CmdBindPipeline(c, CommandId::CmdBindPipeline, VK_PIPELINE_BIND_POINT_COMPUTE, handle<VkPipeline>(kPlainPipeline));
        CmdPushDescriptorSetKHR(c, CommandId::CmdPushDescriptorSetKHR, VK_PIPELINE_BIND_POINT_COMPUTE,
                                handle<VkPipelineLayout>(90), 0, 1, &w);
        CmdDispatch(c, CommandId::CmdDispatch, 1, 1, 1);
    });
    EXPECT_TRUE(pushed.conflicts_with(fill(kA, 200, 4)));
    EXPECT_FALSE(pushed.conflicts_with(fill(kD, 0, 4)));

    const Footprint copy = capture([](CommandCapture& c) {
        const VkBufferCopy region{0, 0, 64};
        CmdCopyBuffer(c, CommandId::CmdCopyBuffer, handle<VkBuffer>(kC), handle<VkBuffer>(kD), 1, &region);
    });
    EXPECT_FALSE(copy.conflicts_with(dispatch(set(kUniform, kC, 0, VK_WHOLE_SIZE, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER))));
    EXPECT_TRUE(copy.conflicts_with(dispatch(set(kStorage, kC))));   // writes its source
    EXPECT_TRUE(copy.conflicts_with(fill(kD, 32, 4)));               // writes to its destination
    EXPECT_FALSE(copy.conflicts_with(fill(kD, 64, 4)));              // past the region

    const Footprint indirect = capture([](CommandCapture& c) {
        CmdBindPipeline(c, CommandId::CmdBindPipeline, VK_PIPELINE_BIND_POINT_COMPUTE, handle<VkPipeline>(kPlainPipeline));
        CmdDispatchIndirect(c, CommandId::CmdDispatchIndirect, handle<VkBuffer>(kD), 16);
    });
    EXPECT_TRUE(indirect.conflicts_with(fill(kD, 24, 4)));
    EXPECT_FALSE(indirect.conflicts_with(fill(kD, 28, 4)));
}

TEST_F(Elision, ImageLayoutTransitionsWriteTheImage) {
    auto transition = [](VkImageLayout from, VkImageLayout to) {
        return [from, to](CommandCapture& c) {
            VkImageMemoryBarrier b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
            b.oldLayout = from;
            b.newLayout = to;
            b.image = handle<VkImage>(kImg1);
            b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
            CmdPipelineBarrier(c, CommandId::CmdPipelineBarrier, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, nullptr, 0, nullptr, 1, &b);
        };
    };
    const Footprint reader = capture([](CommandCapture& c) {
        const VkImageCopy region{};
        CmdCopyImage(c, CommandId::CmdCopyImage, handle<VkImage>(kImg2), VK_IMAGE_LAYOUT_GENERAL,
                     handle<VkImage>(kImg3), VK_IMAGE_LAYOUT_GENERAL, 1, &region);
    });
    EXPECT_TRUE(capture(transition(VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_GENERAL)).conflicts_with(reader));
    EXPECT_FALSE(capture(transition(VK_IMAGE_LAYOUT_GENERAL, VK_IMAGE_LAYOUT_GENERAL)).conflicts_with(reader));
}

TEST_F(Elision, TheBarrierComparesAgainstEveryCaptureSinceTheLastOneRecorded) {
    const Footprint a = fill(kA, 0, VK_WHOLE_SIZE), b = fill(kC, 0, VK_WHOLE_SIZE), c = fill(kB, 0, 16),
                    d = fill(kD, 0, VK_WHOLE_SIZE), e = fill(kA, 0, 4);
    BarrierElision elision;
    elision.begin_batch();
    EXPECT_FALSE(elision.may_elide(d)) << "a batch's first keeps its barrier";
    EXPECT_TRUE(elision.may_elide(a));
    EXPECT_TRUE(elision.may_elide(b)) << "disjoint from a and d";
    EXPECT_FALSE(elision.may_elide(c)) << "meets a, two captures back";
    EXPECT_TRUE(elision.may_elide(d)) << "after c's barrier only c counts";
    EXPECT_FALSE(elision.may_elide(fill(kB, 8, 4))) << "meets c";
    // An application barrier at a capture's start restarts the union too.
    elision.ordered(a);
    EXPECT_FALSE(elision.may_elide(e));
    EXPECT_FALSE(elision.may_elide(Footprint::make_unknown()));
    EXPECT_FALSE(elision.may_elide(d)) << "after an unknown capture";
    // A new batch forgets the last.
    elision.begin_batch();
    EXPECT_FALSE(elision.may_elide(d));
    // An indirect dispatch keeps the barrier that reaches DRAW_INDIRECT, disjoint or not: the
    // barrier before c above did not order a's writes before indirect parameter reads.
    EXPECT_FALSE(elision.may_elide(b, true));
    EXPECT_TRUE(elision.may_elide(a)) << "the union restarted at the indirect capture";
    // Blind (test-only): all but a batch's first.
    elision.begin_batch();
    EXPECT_FALSE(elision.may_elide_blindly());
    EXPECT_TRUE(elision.may_elide_blindly());
}

TEST(Footprint, MergesRangesAndGivesUpPastItsLimit) {
    Footprint f;
    const VkDeviceMemory m = handle<VkDeviceMemory>(1);
    f.add(m, 0, 16, false);
    f.add(m, 16, 32, true);
    f.add(m, 64, 80, false);
    f.normalize();
    ASSERT_EQ(f.ranges().size(), 2u);
    EXPECT_EQ(f.ranges()[0], (MemoryRange{m, 0, 32, true}));
    f.add(VK_NULL_HANDLE, 0, 4, false);
    EXPECT_TRUE(f.unknown());
    Footprint many;
    for (uint64_t i = 0; i <= Footprint::kMaxRanges; ++i) many.add(m, i * 8, i * 8 + 4, false);
    many.normalize();
    EXPECT_TRUE(many.unknown());
}

TEST(SpirvCapabilities, AddressesReachAnyMemory) {
    auto reaches = [](const std::vector<uint32_t>& w) { return spirv_reaches_any_memory(w.data(), w.size() * 4); };
    EXPECT_FALSE(reaches(spirv({1})));                // Shader
    EXPECT_TRUE(reaches(spirv({1, 5347})));           // PhysicalStorageBufferAddresses
    EXPECT_TRUE(reaches(spirv({4})));                 // Addresses
    std::vector<uint32_t> swapped = spirv({1});
    swapped[0] = 0x03022307;
    EXPECT_TRUE(reaches(swapped));
    std::vector<uint32_t> truncated = spirv({1, 5347});
    truncated.resize(6);
    EXPECT_TRUE(reaches(truncated));
    EXPECT_TRUE(spirv_reaches_any_memory(nullptr, 0));
}
