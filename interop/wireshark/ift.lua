-- ift.lua: Wireshark dissector for IFT, the iWARP Framing for TCP (draft-williams-iwarp-ift-01).
--
-- Decodes the 64-octet adaption indication (both phases) and every frame: header_size,
-- payload_size, receiver's VTag, header CRC32C, payload CRC32C (both verified), then hands the
-- DDP header and payload (without the CRC fields) to Wireshark's own iwarp_ddp_rdmap dissector,
-- which decodes DDP (RFC 5041) and RDMAP (RFC 5040) exactly as it does behind MPA.
--
-- Load: wireshark -X lua_script:ift.lua   or copy to the personal plugins folder (README.md).
-- Wireshark 4.0 Lua API (Lua 5.2). Frames are found on TCP port 7176 (preference "ift.ports"),
-- and on any port where a capture shows the indication's "RDDP" magic at the start of a stream.
--
-- Whether a frame carries a header CRC or a payload CRC is fixed per direction by its sender's
-- indication (HC/PC flags); the VTag a frame carries is the one its receiver announced. Both are
-- learnt from the indications in the capture; for a capture that starts after them, the
-- preferences "ift.assume_hc" / "ift.assume_pc" say what to assume.

local ift = Proto("ift", "iWARP Framing for TCP (IFT)")

local MAGIC = 0x52444450 -- "RDDP"
local AI_LEN = 64

local flag_names = { "PH", "R", "HC", "PC", "IH", "IP", "SP", "SM", "RM" }
local status_vals = { [0] = "Bad", [1] = "Good", [2] = "Unverified" }

local f = {
    ai          = ProtoField.none("ift.ai", "Adaption indication"),
    magic       = ProtoField.uint32("ift.ai.magic", "Magic", base.HEX),
    version     = ProtoField.uint16("ift.ai.version", "Version", base.DEC),
    bc_version  = ProtoField.uint16("ift.ai.bc_version", "BC version", base.DEC),
    flags       = ProtoField.uint32("ift.ai.flags", "Flags", base.HEX),
    f_ph        = ProtoField.bool("ift.ai.flags.ph", "PH (phase 1)", 32, nil, 0x80000000),
    f_r         = ProtoField.bool("ift.ai.flags.r", "R (RDMA mode)", 32, nil, 0x40000000),
    f_hc        = ProtoField.bool("ift.ai.flags.hc", "HC (sends header CRC)", 32, nil, 0x20000000),
    f_pc        = ProtoField.bool("ift.ai.flags.pc", "PC (sends payload CRC)", 32, nil, 0x10000000),
    f_ih        = ProtoField.bool("ift.ai.flags.ih", "IH (ignores header CRC)", 32, nil, 0x08000000),
    f_ip        = ProtoField.bool("ift.ai.flags.ip", "IP (ignores payload CRC)", 32, nil, 0x04000000),
    f_sp        = ProtoField.bool("ift.ai.flags.sp", "SP (permits speculative placement)", 32, nil, 0x02000000),
    f_sm        = ProtoField.bool("ift.ai.flags.sm", "SM (sends markers)", 32, nil, 0x01000000),
    f_rm        = ProtoField.bool("ift.ai.flags.rm", "RM (wants markers)", 32, nil, 0x00800000),
    f_rsvd      = ProtoField.uint32("ift.ai.flags.reserved", "Reserved flags", base.HEX, nil, 0x007FFFFF),
    sender_vtag = ProtoField.uint16("ift.ai.vtag", "Sender's VTag", base.HEX),
    marker_int  = ProtoField.uint16("ift.ai.marker_interval", "Marker interval", base.DEC),
    reserved    = ProtoField.bytes("ift.ai.reserved", "Reserved"),
    ai_crc      = ProtoField.uint32("ift.ai.crc", "CRC32C", base.HEX),
    ai_crc_st   = ProtoField.uint8("ift.ai.crc.status", "CRC status", base.DEC, status_vals),

    frame       = ProtoField.none("ift.frame", "IFT frame"),
    hsize       = ProtoField.uint16("ift.header_size", "Header size", base.DEC),
    psize       = ProtoField.uint16("ift.payload_size", "Payload size", base.DEC),
    vtag        = ProtoField.uint16("ift.vtag", "Receiver's VTag", base.HEX),
    ddp_header  = ProtoField.bytes("ift.ddp_header", "DDP header"),
    hcrc        = ProtoField.uint32("ift.hcrc", "Header CRC32C", base.HEX),
    hcrc_st     = ProtoField.uint8("ift.hcrc.status", "Header CRC status", base.DEC, status_vals),
    payload     = ProtoField.bytes("ift.payload", "DDP payload"),
    pcrc        = ProtoField.uint32("ift.pcrc", "Payload CRC32C", base.HEX),
    pcrc_st     = ProtoField.uint8("ift.pcrc.status", "Payload CRC status", base.DEC, status_vals),
    crc_source  = ProtoField.string("ift.crc_source", "CRC presence learnt from"),
    length      = ProtoField.uint32("ift.length", "IFT PDU length", base.DEC),
}
ift.fields = f

local e = {
    bad_ai_crc  = ProtoExpert.new("ift.ai.crc.bad", "Adaption indication CRC32C mismatch",
                                  expert.group.CHECKSUM, expert.severity.ERROR),
    bad_hcrc    = ProtoExpert.new("ift.hcrc.bad", "Header CRC32C mismatch",
                                  expert.group.CHECKSUM, expert.severity.ERROR),
    bad_pcrc    = ProtoExpert.new("ift.pcrc.bad", "Payload CRC32C mismatch",
                                  expert.group.CHECKSUM, expert.severity.ERROR),
    bad_vtag    = ProtoExpert.new("ift.vtag.bad", "VTag differs from the receiver's announced VTag",
                                  expert.group.PROTOCOL, expert.severity.ERROR),
    bad_hsize   = ProtoExpert.new("ift.header_size.bad", "Header size is not 14 (tagged) or 18 (untagged)",
                                  expert.group.MALFORMED, expert.severity.ERROR),
    bad_version = ProtoExpert.new("ift.ai.version.bad", "Version or BC version 0 (does not exist)",
                                  expert.group.MALFORMED, expert.severity.ERROR),
    assumed     = ProtoExpert.new("ift.assumed", "Indication not captured: CRC presence assumed from preferences",
                                  expert.group.ASSUMPTION, expert.severity.NOTE),
}
ift.experts = { e.bad_ai_crc, e.bad_hcrc, e.bad_pcrc, e.bad_vtag, e.bad_hsize, e.bad_version, e.assumed }

ift.prefs.ports = Pref.range("TCP ports", "7176", "TCP ports carrying IFT from the first octet", 65535)
ift.prefs.assume_hc = Pref.bool("Assume header CRC", true,
    "When a stream's indication was not captured: assume its frames carry a header CRC")
ift.prefs.assume_pc = Pref.bool("Assume payload CRC", true,
    "When a stream's indication was not captured: assume its frames carry a payload CRC")

-- CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as iSCSI and MPA use it.
local band, bxor, rshift = bit32.band, bit32.bxor, bit32.rshift
local crc_table = {}
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        if band(c, 1) ~= 0 then c = bxor(rshift(c, 1), 0x82F63B78) else c = rshift(c, 1) end
    end
    crc_table[i] = c
end

local function crc32c(tvb, offset, length)
    local crc = 0xFFFFFFFF
    local pos, stop = offset, offset + length
    while pos < stop do
        local n = math.min(4096, stop - pos)
        local s = tvb:raw(pos, n)
        for i = 1, n do
            crc = bxor(crc_table[band(bxor(crc, s:byte(i)), 0xFF)], rshift(crc, 8))
        end
        pos = pos + n
    end
    return bxor(crc, 0xFFFFFFFF)
end

-- Indications seen, per direction ("src:port>dst:port"), each with the frame it was in, so that a
-- second pass or a reused port picks the indication that was in force at each frame.
local indications = {}

local function dir_key(pinfo, reverse)
    local a = tostring(pinfo.src) .. ":" .. pinfo.src_port
    local b = tostring(pinfo.dst) .. ":" .. pinfo.dst_port
    if reverse then return b .. ">" .. a end
    return a .. ">" .. b
end

local function latest(key, number)
    local list, found = indications[key], nil
    if list then
        for _, ai in ipairs(list) do
            if ai.number <= number then found = ai end
        end
    end
    return found
end

function ift.init()
    indications = {}
end

local ddp_rdmap = Dissector.get("iwarp_ddp_rdmap")

local function dissect_indication(tvb, pinfo, tree)
    local t = tree:add(f.ai, tvb(0, AI_LEN))
    t:add(f.magic, tvb(0, 4))
    local version, bc = tvb(4, 2):uint(), tvb(6, 2):uint()
    local vt = t:add(f.version, tvb(4, 2))
    t:add(f.bc_version, tvb(6, 2))
    if version == 0 or bc == 0 then vt:add_proto_expert_info(e.bad_version) end
    local flags = tvb(8, 4):uint()
    local ft = t:add(f.flags, tvb(8, 4))
    local set = {}
    for i, name in ipairs(flag_names) do
        ft:add(f["f_" .. name:lower()], tvb(8, 4))
        if band(flags, bit32.lshift(1, 32 - i)) ~= 0 then set[#set + 1] = name end
    end
    ft:add(f.f_rsvd, tvb(8, 4))
    ft:append_text(" (" .. (#set > 0 and table.concat(set, ", ") or "none") .. ")")
    t:add(f.sender_vtag, tvb(12, 2))
    t:add(f.marker_int, tvb(14, 2))
    t:add(f.reserved, tvb(16, 44))
    local want = crc32c(tvb, 0, 60)
    local got = tvb(60, 4):le_uint()
    local ct = t:add_le(f.ai_crc, tvb(60, 4))
    if got == want then
        ct:append_text(" [correct]")
        t:add(f.ai_crc_st, 1):set_generated()
    else
        ct:append_text(string.format(" [incorrect, should be 0x%08x]", want))
        t:add(f.ai_crc_st, 0):set_generated()
        ct:add_proto_expert_info(e.bad_ai_crc)
    end
    local phase = band(flags, 0x80000000) ~= 0 and 1 or 0
    t:append_text(string.format(", phase %d, %s mode, VTag 0x%04x, flags %s", phase,
        band(flags, 0x40000000) ~= 0 and "RDMA" or "DDP", tvb(12, 2):uint(),
        #set > 0 and table.concat(set, "|") or "none"))
    pinfo.cols.info:set(string.format("Adaption indication phase %d, VTag 0x%04x, %s",
        phase, tvb(12, 2):uint(), #set > 0 and table.concat(set, "|") or "no flags"))
    if not pinfo.visited then
        local key = dir_key(pinfo, false)
        indications[key] = indications[key] or {}
        table.insert(indications[key], {
            number = pinfo.number,
            hc = band(flags, 0x20000000) ~= 0,
            pc = band(flags, 0x10000000) ~= 0,
            vtag = tvb(12, 2):uint(),
        })
    end
end

-- What a frame in this packet's direction carries: {hc, pc, vtag (expected, or nil), learnt}
local function framing(pinfo)
    local mine = latest(dir_key(pinfo, false), pinfo.number)
    local peer = latest(dir_key(pinfo, true), pinfo.number)
    if mine then
        return mine.hc, mine.pc, peer and peer.vtag, true
    end
    return ift.prefs.assume_hc, ift.prefs.assume_pc, peer and peer.vtag, false
end

local function is_indication(tvb, offset)
    return tvb:len() - offset >= 4 and tvb(offset, 4):uint() == MAGIC
end

local function pdu_length(tvb, pinfo, offset)
    if is_indication(tvb, offset) then return AI_LEN end
    local hc, pc = framing(pinfo)
    return 6 + tvb(offset, 2):uint() + tvb(offset + 2, 2):uint() + (hc and 4 or 0) + (pc and 4 or 0)
end

local function check_crc(tvb, tree, field, status_field, expert_bad, pos, covered_from, covered_len)
    local want = crc32c(tvb, covered_from, covered_len)
    local got = tvb(pos, 4):le_uint()
    local item = tree:add_le(field, tvb(pos, 4))
    if got == want then
        item:append_text(" [correct]")
        tree:add(status_field, 1):set_generated()
        return true
    end
    item:append_text(string.format(" [incorrect, should be 0x%08x]", want))
    tree:add(status_field, 0):set_generated()
    item:add_proto_expert_info(expert_bad)
    return false
end

local function dissect_frame(tvb, pinfo, tree, root)
    local hs, ps = tvb(0, 2):uint(), tvb(2, 2):uint()
    local hc, pc, expected_vtag, learnt = framing(pinfo)
    local t = tree:add(f.frame, tvb())
    t:append_text(string.format(", header %d, payload %d%s%s", hs, ps, hc and ", header CRC" or "",
        pc and ", payload CRC" or ""))
    t:add(f.hsize, tvb(0, 2))
    t:add(f.psize, tvb(2, 2))
    local vt = t:add(f.vtag, tvb(4, 2))
    if expected_vtag and tvb(4, 2):uint() ~= expected_vtag then
        vt:append_text(string.format(" [receiver announced 0x%04x]", expected_vtag))
        vt:add_proto_expert_info(e.bad_vtag)
    end
    if learnt then
        t:add(f.crc_source, "the sender's adaption indication"):set_generated()
    else
        t:add(f.crc_source, "preferences (indication not captured)"):set_generated()
        t:add_proto_expert_info(e.assumed)
    end
    local ht = t:add(f.ddp_header, tvb(6, hs))
    if hs > 0 then
        local tagged = band(tvb(6, 1):uint(), 0x80) ~= 0
        if hs ~= (tagged and 14 or 18) then ht:add_proto_expert_info(e.bad_hsize) end
    end
    local pos = 6 + hs
    local crcs_ok = true
    if hc then
        crcs_ok = check_crc(tvb, t, f.hcrc, f.hcrc_st, e.bad_hcrc, pos, 0, 6 + hs) and crcs_ok
        pos = pos + 4
    end
    local payload_at = pos
    if ps > 0 then t:add(f.payload, tvb(pos, ps)) end
    pos = pos + ps
    if pc then
        crcs_ok = check_crc(tvb, t, f.pcrc, f.pcrc_st, e.bad_pcrc, pos, payload_at, ps) and crcs_ok
    end
    -- DDP header || payload as one segment, the shape iwarp_ddp_rdmap gets from MPA
    local segment = tvb:bytes(6, hs)
    if ps > 0 then segment:append(tvb:bytes(payload_at, ps)) end
    if hs > 0 then
        ddp_rdmap:call(segment:tvb("DDP segment"), pinfo, root) -- beside IFT, as behind MPA
    end
    return crcs_ok
end

local function dissect_pdu(tvb, pinfo, tree)
    pinfo.cols.protocol:set("IFT")
    local t = tree:add(ift, tvb())
    t:add(f.length, tvb:len()):set_generated()
    if is_indication(tvb, 0) then
        dissect_indication(tvb, pinfo, t)
    else
        dissect_frame(tvb, pinfo, t, tree)
    end
    return tvb:len()
end

function ift.dissector(tvb, pinfo, tree)
    dissect_tcp_pdus(tvb, tree, 6, pdu_length, dissect_pdu)
    return tvb:len()
end

-- A stream that opens with an adaption indication (magic, Version and BC version not 0) is IFT:
-- the rest of that TCP conversation goes to this dissector.
local function heuristic(tvb, pinfo, tree)
    if tvb:len() < 8 or tvb(0, 4):uint() ~= MAGIC then return false end
    if tvb(4, 2):uint() == 0 or tvb(6, 2):uint() == 0 then return false end
    pinfo.conversation = ift
    ift.dissector(tvb, pinfo, tree)
    return true
end
ift:register_heuristic("tcp", heuristic)

local registered = nil
function ift.prefs_changed()
    local tcp_port = DissectorTable.get("tcp.port")
    if registered then tcp_port:remove(registered, ift) end
    registered = ift.prefs.ports
    tcp_port:add(registered, ift)
end
DissectorTable.get("tcp.port"):add(ift.prefs.ports, ift)
registered = ift.prefs.ports
