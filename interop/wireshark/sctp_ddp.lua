-- sctp_ddp.lua: Wireshark dissector for the SCTP DDP/RDMA adaptation
-- (draft-stewart-otis-sctp-ddp-rdma-00): the placement header extension at the start of every
-- DATA chunk's user data, and names for the Adaptation Layer Indication (INIT/INIT-ACK parameter
-- 0xC006) that enables it.
--
-- Extension: Placement Mode (24 bits), Flags (8: A 0x80, N 0x40, T 0x20), Placement Tag (32),
-- Placement Offset (64) and, when the sender indicated one of the RDMA values (3, 4, 5), the
-- Association Wide Sequence (32). Which of the two layouts (16 or 20 octets) a chunk uses follows
-- its sender's indication, learnt from the INIT or INIT-ACK in the capture (else preference
-- "sctp_ddp.assume_rdma"). Behind the RDMA extension rides one RFC 5041 DDP segment, handed to
-- Wireshark's own iwarp_ddp_rdmap dissector; behind the DDP extension, the ULP's data.
-- Not to be confused with RFC 5043 (PPIDs 16/17), which Wireshark decodes itself.
--
-- Load: wireshark -X lua_script:sctp_ddp.lua (Wireshark 4.0 Lua API). DATA chunks are taken on
-- SCTP port 7177 (preference "sctp_ddp.ports") and on any association whose INIT or INIT-ACK
-- carried an indication of 1..5.

local shim = Proto("sctp_ddp", "SCTP DDP/RDMA placement extension")

local indication_names = {
    [1] = "DDP", [2] = "DDP_WITH_TAG", [3] = "RDMA_ONLY", [4] = "RDMA_AND_NEGOTIATION",
    [5] = "RDMA_NEGOTIATION",
}
local mode_names = {
    [0] = "NO_PLACEMENT_MODE", [1] = "DDP_MODE", [2] = "DDP_WITH_TAG_MODE", [3] = "RDMA_PLACEMENT_MODE",
}
-- draft §3.2.1 R1-R4: the modes a sender may use under its indication
local allowed = {
    [1] = { [0] = true, [1] = true },
    [2] = { [0] = true, [2] = true },
    [3] = { [3] = true },
    [4] = { [0] = true, [3] = true },
    [5] = { [0] = true },
}

local f = {
    ext        = ProtoField.none("sctp_ddp.extension", "Placement header extension"),
    mode       = ProtoField.uint24("sctp_ddp.mode", "Placement Mode", base.DEC, mode_names),
    flags      = ProtoField.uint8("sctp_ddp.flags", "Flags", base.HEX),
    f_ack      = ProtoField.bool("sctp_ddp.flags.ack", "Acknowledgement Requested", 8, nil, 0x80),
    f_notify   = ProtoField.bool("sctp_ddp.flags.notify", "Notification upon Completion", 8, nil, 0x40),
    f_release  = ProtoField.bool("sctp_ddp.flags.release", "Release Tag upon Completion", 8, nil, 0x20),
    f_rsvd     = ProtoField.uint8("sctp_ddp.flags.reserved", "Reserved", base.HEX, nil, 0x1F),
    tag        = ProtoField.uint32("sctp_ddp.tag", "Placement Tag", base.HEX),
    offset     = ProtoField.uint64("sctp_ddp.offset", "Placement Offset", base.HEX),
    aws        = ProtoField.uint32("sctp_ddp.aws", "Association Wide Sequence", base.DEC),
    data       = ProtoField.bytes("sctp_ddp.data", "ULP data"),
    indication = ProtoField.uint32("sctp_ddp.indication", "Sender's Adaptation Layer Indication", base.DEC,
                                   indication_names),
    ind_source = ProtoField.string("sctp_ddp.indication_source", "Indication learnt from"),
}
shim.fields = f

local e = {
    short      = ProtoExpert.new("sctp_ddp.short", "User data shorter than the placement header extension",
                                 expert.group.MALFORMED, expert.severity.ERROR),
    bad_mode   = ProtoExpert.new("sctp_ddp.mode.bad", "Placement Mode not allowed under the sender's indication (R1-R4)",
                                 expert.group.PROTOCOL, expert.severity.ERROR),
    unknown    = ProtoExpert.new("sctp_ddp.mode.unknown", "Undefined Placement Mode",
                                 expert.group.MALFORMED, expert.severity.ERROR),
    assumed    = ProtoExpert.new("sctp_ddp.assumed", "Indication not captured: extension layout assumed from preferences",
                                 expert.group.ASSUMPTION, expert.severity.NOTE),
}
shim.experts = { e.short, e.bad_mode, e.unknown, e.assumed }

shim.prefs.ports = Pref.range("SCTP ports", "7177", "SCTP ports whose DATA chunks carry the extension", 65535)
shim.prefs.assume_rdma = Pref.bool("Assume RDMA extension", true,
    "When an association's INIT/INIT-ACK was not captured: assume the 20-octet RDMA extension")

-- The indication each sender announced, per direction, with the frame it was seen in.
local indications = {}
function shim.init() indications = {} end

local function dir_key(pinfo, reverse)
    local a = tostring(pinfo.src) .. ":" .. pinfo.src_port
    local b = tostring(pinfo.dst) .. ":" .. pinfo.dst_port
    if reverse then return b .. ">" .. a end
    return a .. ">" .. b
end

-- Recorded on whichever pass first sees the INIT (tshark -2 builds no tree in its first pass, so
-- the parameter's field may first be seen in the second), once per frame.
local function remember(key, number, value)
    local list = indications[key] or {}
    indications[key] = list
    for _, ai in ipairs(list) do
        if ai.number == number then return end
    end
    table.insert(list, { number = number, value = value })
end

local function sender_indication(pinfo)
    local list, found = indications[dir_key(pinfo, false)], nil
    if list then
        for _, ai in ipairs(list) do
            if ai.number <= pinfo.number then found = ai.value end
        end
    end
    return found
end

local ddp_rdmap = Dissector.get("iwarp_ddp_rdmap")

local function dissect(tvb, pinfo, tree)
    local ind = sender_indication(pinfo)
    local learnt = ind ~= nil
    local rdma
    if learnt then rdma = ind >= 3 else rdma = shim.prefs.assume_rdma end
    local ext_len = rdma and 20 or 16
    pinfo.cols.protocol:set("SCTP-DDP")
    local t = tree:add(shim, tvb(0, math.min(ext_len, tvb:len())))
    if learnt then
        t:add(f.indication, ind):set_generated()
        t:add(f.ind_source, "the sender's INIT/INIT-ACK"):set_generated()
    else
        t:add(f.ind_source, "preferences (INIT/INIT-ACK not captured)"):set_generated()
        t:add_proto_expert_info(e.assumed)
    end
    if tvb:len() < ext_len then
        t:add_proto_expert_info(e.short)
        return tvb:len()
    end
    local mode = tvb(0, 3):uint()
    local mi = t:add(f.mode, tvb(0, 3))
    if not mode_names[mode] then
        mi:add_proto_expert_info(e.unknown)
    elseif learnt and allowed[ind] and not allowed[ind][mode] then
        mi:add_proto_expert_info(e.bad_mode)
    end
    local flags = tvb(3, 1):uint()
    local ft = t:add(f.flags, tvb(3, 1))
    ft:add(f.f_ack, tvb(3, 1))
    ft:add(f.f_notify, tvb(3, 1))
    ft:add(f.f_release, tvb(3, 1))
    ft:add(f.f_rsvd, tvb(3, 1))
    t:add(f.tag, tvb(4, 4))
    t:add(f.offset, tvb(8, 8))
    local summary = string.format("%s, tag 0x%08x", mode_names[mode] or ("mode " .. mode), tvb(4, 4):uint())
    if rdma then
        t:add(f.aws, tvb(16, 4))
        summary = summary .. string.format(", AWS %d", tvb(16, 4):uint())
    end
    if flags ~= 0 then summary = summary .. string.format(", flags 0x%02x", flags) end
    t:append_text(", " .. summary)
    local rest = tvb:len() - ext_len
    if rdma and rest > 0 then
        -- one complete RFC 5041 DDP segment follows the RDMA extension
        ddp_rdmap:call(tvb(ext_len):tvb(), pinfo, tree)
    elseif rest > 0 then
        t:add(f.data, tvb(ext_len))
        pinfo.cols.info:set("SCTP-DDP " .. summary)
    else
        pinfo.cols.info:set("SCTP-DDP " .. summary)
    end
    return tvb:len()
end

function shim.dissector(tvb, pinfo, tree)
    return dissect(tvb, pinfo, tree)
end

-- DATA on an association whose sender indicated 1..5 in its INIT/INIT-ACK is ours, whatever port.
local function heuristic(tvb, pinfo, tree)
    if sender_indication(pinfo) == nil then return false end
    dissect(tvb, pinfo, tree)
    return true
end
shim:register_heuristic("sctp", heuristic)

-- The Adaptation Layer Indication in INIT (chunk type 1) and INIT-ACK (2): remembered per sender,
-- and named in the tree. A postdissector, since the SCTP dissector does not hand parameters on.
local chunk_type = Field.new("sctp.chunk_type")
local adaptation = Field.new("sctp.adaptation_layer_indication")
local post = Proto("sctp_ddp_indication", "SCTP DDP/RDMA Adaptation Layer Indication")
local pf_value = ProtoField.uint32("sctp_ddp_indication.value", "Adaptation Layer Indication", base.HEX,
                                   indication_names)
post.fields = { pf_value }

function post.dissector(tvb, pinfo, tree)
    local values = { adaptation() }
    if #values == 0 then return end
    local types = { chunk_type() }
    local is_init = false
    for _, ct in ipairs(types) do
        if ct.value == 1 or ct.value == 2 then is_init = true end
    end
    if not is_init then return end
    for _, v in ipairs(values) do
        local item = tree:add(post, v.range)
        item:add(pf_value, v.range)
        local name = indication_names[v.value]
        item:append_text(": " .. (name or "not a DDP/RDMA adaptation value") ..
            (name and (v.value >= 3 and " (20-octet RDMA extension)" or " (16-octet DDP extension)") or ""))
        if name then remember(dir_key(pinfo, false), pinfo.number, v.value) end
    end
end
register_postdissector(post)

local registered = nil
function shim.prefs_changed()
    local sctp_port = DissectorTable.get("sctp.port")
    if registered then sctp_port:remove(registered, shim) end
    registered = shim.prefs.ports
    sctp_port:add(registered, shim)
end
DissectorTable.get("sctp.port"):add(shim.prefs.ports, shim)
registered = shim.prefs.ports
