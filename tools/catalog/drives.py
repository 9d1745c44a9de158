RULES = [
    "Zones: zone i of n has floor(first + (last - first) * i / (n - 1) + 0.5) sectors per track",
    "(linear interpolation between the outermost and innermost track sizes) and the same",
    "number of cylinders (the last zone takes the remainder). Real drives have uneven zone",
    "widths; only the first zone's track size is meant to be exact.",
    "Skews are physical, rounded up to whole sectors, per zone:",
    "  track skew    = ceil(head_switch_ms / sector_ms), sector_ms = 60000 / RPM / spt",
    "  cylinder skew = ceil(single_cylinder_ms / sector_ms)",
    "Sparing: none modelled (slip-to-end with no spares, no slips, no defects).",
    "Controller overheads are small round figures (hits 0.10 ms, read misses 0.15 ms, write",
    "misses 0.20 ms), assumed: the DIXtrac-extracted Atlas 10K and Ultrastar 18ES of the",
    "same era measure 0.08-0.50 ms. Write-through cache (fast_write_level 0), read hits",
    "on write data allowed, sequential writes combined: assumed.",
    "Read-ahead serves sequential streams: a hit on the segment being prefetched keeps the",
    "read-ahead going and a read of the block it is about to bring waits for it (DiskSim's",
    "'Read-ahead on idle hit' and 'Allow almost read hits', both on): assumed, as real",
    "firmware streams from its buffer; with both off a 4 KB sequential read on a drive",
    "whose host link is faster than its media misses by a full revolution.",
]

NO_POWER = "power: not given by any paper; spinstack's generic defaults apply (assumed)"

def level(name, watts, enter_ms, enter_joules, exit_ms, exit_joules):
    """A standby level: its power, and time and energy to enter and to leave it."""
    return dict(name=name, watts=watts, enter_ms=enter_ms, enter_joules=enter_joules,
                exit_ms=exit_ms, exit_joules=exit_joules)

def fw(bus_ms, zero_latency, segments, segment_sectors, read_ahead, queue, policy):
    return dict(bus_ms=bus_ms, zero_latency=zero_latency, overheads=OVERHEADS,
                cache=dict(segments=segments, segment_sectors=segment_sectors,
                           read_ahead=read_ahead), queue=queue, policy=policy)

TRAX = "traxtents-schindler-fast02.md"
QIAN = "linux-validation-track-aligned-raid5-qian.txt"
GODA = "power-aware-remote-replication-goda.txt"
SHI = "dma-aligned-buffer-software-raid-shi.txt"

# ---------------------------------------------------------------- Quantum Atlas 10K II
write(dict(
    name="atlas10k2", layout="zoned",
    description="Quantum Atlas 10K II, 9.2 GB, 10000 RPM, Ultra160 SCSI (2000)",
    surfaces=2, zones=16, spt_first=528, spt_last=353, capacity_bytes=9.2e9,
    mech=dict(rpm=10000, head_switch_ms=0.6, single_ms=0.8, average_ms=4.7, full_ms=10.0),
    fw=fw(512 / 160e6 * 1e3, True, 12, 1344, "to_end_of_next_track", 64, "sptf"),
    provenance=[
        f"paper {TRAX}, Table 1: 10000 RPM, head switch 0.6 ms, average seek 4.7 ms, 528-353 sectors per track, 9 GB",
        f"paper {TRAX}, Fig. 1: first zone holds 264 KB per track = 528 sectors (exact)",
        f"paper {TRAX}, sections 5.1/5.2: zero-latency access; attached via Ultra160 SCSI (160 MB/s)",
        "capacity: 9.2 GB, the smallest model of the Atlas 10K II family (9.2/18.4/36.7/73.4 GB product manual)",
        "Table 1's 52014 tracks do not fit 528-353 spt and 9 GB (52014 x 440 = 11.7 GB); kept capacity and spt, derived tracks",
        "assumed: 2 surfaces, 16 zones, single-cylinder seek 0.8 ms, full stroke 10.0 ms",
        "assumed: 8 MB cache as 12 segments of 1344 sectors; read-ahead to the end of the next track as the DIXtrac Atlas 10K",
        "assumed: tagged queue of 64, shortest-positioning-time-first",
        NO_POWER,
    ]),
    ["Quantum Atlas 10K II: hand-made from published figures (not DIXtrac-extracted).",
     "",
     f"From the paper ({TRAX}):",
     "  Table 1: 10000 RPM, head switch 0.6 ms, average seek 4.7 ms, 528-353 512-byte",
     "  sectors per track, 52014 tracks, 9 GB, zero-latency access (section 5.1).",
     "  Figure 1: the first zone has 264 KB (528 sectors) per track: zone 0 is exact.",
     "  Section 5.1: attached through an Adaptec Ultra160 adapter: 160 MB/s, so",
     "  bus_sector_transfer_ms = 512 B / 160 MB/s = 0.0032 ms.",
     "Conflict: Table 1's 52014 tracks cannot carry 528-353 sectors per track in 9 GB",
     "(52014 x 440 average = 11.7 GB; even 52014 x 353 = 9.4 GB). The experiments depend on",
     "the track sizes, so we keep the track-size range and the capacity (9.2 GB, the",
     "family's smallest model) and derive the cylinder count; the track count comes out",
     "lower than the table's.",
     "Assumed (typical for a 2000-era 10K RPM drive, not in the paper): 2 surfaces, 16 zones,",
     "single-cylinder seek 0.8 ms, full-stroke seek 10.0 ms, 8 MB cache in 12 segments of",
     "1344 sectors (>= 2 tracks), read-ahead to the end of the next track (as the",
     "DIXtrac-extracted Atlas 10K), a 64-deep tagged queue with SPTF scheduling.",
     "Power: not in any paper; spinstack's generic defaults."] + [""] + RULES)

# ---------------------------------------------------------------- Seagate Cheetah X15
write(dict(
    name="cheetahx15", layout="zoned",
    description="Seagate Cheetah X15, 18 GB, 15000 RPM, Fibre Channel (2000)",
    surfaces=10, cylinders=10375, zones=12, spt_first=386, spt_last=286, capacity_bytes=18e9,
    mech=dict(rpm=15000, head_switch_ms=0.8, single_ms=0.7, average_ms=3.9, full_ms=7.5),
    fw=fw(512 / 100e6 * 1e3, False, 10, 800, "continuous", 64, "sptf"),
    provenance=[
        f"paper {TRAX}, Table 1: 15000 RPM, head switch 0.8 ms, average seek 3.9 ms, 386-286 sectors per track, 103750 tracks, 18 GB",
        f"paper {TRAX}, sections 5.1/5.2: no zero-latency access; attached via a Qlogic Fibre Channel adapter (1 Gb/s, about 100 MB/s)",
        "assumed: 10 surfaces x 10375 cylinders = Table 1's 103750 tracks; 12 zones",
        "assumed: single-cylinder seek 0.7 ms, full stroke 7.5 ms (15K RPM data-sheet class)",
        "assumed: 4 MB cache as 10 segments of 800 sectors; continuous read-ahead; tagged queue of 64, SPTF",
        NO_POWER,
    ]),
    ["Seagate Cheetah X15: hand-made from published figures (not DIXtrac-extracted).",
     "",
     f"From the paper ({TRAX}):",
     "  Table 1: 15000 RPM, head switch 0.8 ms, average seek 3.9 ms, 386-286 512-byte",
     "  sectors per track, 103750 tracks, 18 GB; no zero-latency access (section 5.1/5.2).",
     "  Section 5.1: attached through a Qlogic Fibre Channel adapter: 1 Gb/s FC carries",
     "  about 100 MB/s, so bus_sector_transfer_ms = 512 B / 100 MB/s = 0.00512 ms.",
     "  Zone 0 has 386 sectors per track (the table's maximum) and is exact.",
     "The table's track count and capacity agree with linear zones (103750 x 336 x 512 B",
     "= 17.85 GB), so the track count is kept: 10 surfaces x 10375 cylinders (the surface",
     "count is assumed; 10 divides 103750).",
     "Assumed (15K RPM data-sheet class, not in the paper): single-cylinder seek 0.7 ms,",
     "full-stroke seek 7.5 ms, 12 zones, 4 MB cache in 10 segments of 800 sectors (>= 2",
     "tracks), continuous read-ahead, a 64-deep tagged queue with SPTF scheduling.",
     "Power: not in any paper; spinstack's generic defaults."] + [""] + RULES)

# ---------------------------------------------------------------- Maxtor Atlas 10K V variants
MAXTOR = [
    ("maxtor10kv-czk", "J20 Q3 CZK", (1144, 1092)),
    ("maxtor10kv-c0k", "J20 Q3 C0K / C9K", (1092, 1144)),
    ("maxtor10kv-7gk", "J20 TK 7GK", (1025, 1196)),
    ("maxtor10kv-s0k", "J20 TF S0K / MKK", (1060, 1170)),
]
# One cylinder count for all four (same mechanics): sized so that the CZK variant holds
# 73 GB with linear zones from the outer track sizes down to 0.67 of them, rounded to
# whole 32-cylinder bands.
_avg_cyl = (1144 + 1092) * (1 + 0.67) / 2
MAXTOR_CYL = round(73e9 / 512 / _avg_cyl / 32) * 32
for name, serial, outer in MAXTOR:
    write(dict(
        name=name, layout="serpentine",
        description=f"Maxtor Atlas 10K V, 73 GB, 10000 RPM, Ultra320 SCSI (2004), serial {serial}",
        outer=outer, inner_ratio=0.67, zones=24, band=32, cylinders=MAXTOR_CYL,
        capacity_bytes=73e9,
        mech=dict(rpm=10000, head_switch_ms=0.5, single_ms=0.3, average_ms=4.4, full_ms=10.5),
        fw=fw(512 / 320e6 * 1e3, True, 6, 2600, "continuous", 64, "sptf"),
        provenance=[
            f"paper {QIAN}, Table 2: outermost track {outer[0]} sectors on surface 0 and {outer[1]} on surface 1 (drive {serial})",
            f"paper {QIAN}, Table 1: 73 GB, 10K RPM, 8 MB on-disk cache; reference [6]: Ultra320 SCSI (320 MB/s)",
            f"paper {QIAN}, Figure 2 text: serpentine numbering in bands of 32 cylinders",
            f"paper {QIAN}, section 2.3: track switching 0.3 to 0.5 ms (read as 0.3 ms same-surface, 0.5 ms head switch)",
            f"paper {QIAN}, zero-latency test: the Maxtor drive supports zero-latency access",
            "assumed: 2 surfaces (Table 2 lists two), 24 zones aligned to bands, innermost tracks 0.67 of outermost (as Quantum Atlas 10K/10K II)",
            "assumed: average seek 4.4 ms and full stroke 10.5 ms (10K RPM 2004 data-sheet class)",
            "assumed: 8 MB cache as 6 segments of 2600 sectors; continuous read-ahead; tagged queue of 64, SPTF",
            NO_POWER,
        ]),
        [f"Maxtor Atlas 10K V, drive {serial}: hand-made from published figures.",
         "",
         f"From the paper ({QIAN}):",
         f"  Table 2: outermost track of surface 0 = {outer[0]} sectors, surface 1 = {outer[1]}",
         "  sectors (zone 0 is exact on both surfaces).",
         "  Table 1: 73 GB, 10K RPM, 8 MB on-disk cache; ref. [6]: Ultra320 SCSI, so",
         "  bus_sector_transfer_ms = 512 B / 320 MB/s = 0.0016 ms.",
         "  Section 2.3 / Figure 2: serpentine numbering, bands of 32 cylinders.",
         "  Section 2.3: 'track switching time of 0.3 to 0.5 msec': we take 0.3 ms as the",
         "  same-surface track-to-track seek (the paper explains serpentine numbering by that",
         "  being faster) and 0.5 ms as the head switch.",
         "  Zero-latency test (section 2.3): the Maxtor drive supports zero-latency access.",
         "Assumed: 2 surfaces (Table 2 lists two); 24 zones, each a whole number of 32-cylinder",
         "bands; each surface's track size falls linearly to 0.67 of its outermost size (the",
         "ratio of the Quantum Atlas 10K and 10K II in the traxtents paper's Table 1, the line",
         "Maxtor took over); one cylinder count for all four variants, sized for 73 GB on the",
         "CZK variant; average seek 4.4 ms and full stroke 10.5 ms (data-sheet class);",
         "8 MB cache in 6 segments of 2600 sectors (>= 2 tracks); continuous read-ahead;",
         "64-deep tagged queue with SPTF.",
         "Skews (one value for the whole drive, from the largest outermost track, so they",
         "are long enough everywhere):",
         "  track_skew_sectors = ceil(0.3 ms / sector_ms); surface_switch = ceil(0.5 ms / sector_ms).",
         "Power: not in any paper; spinstack's generic defaults."] + [""] + RULES[:4])

# ---------------------------------------------------------------- IBM Ultrastar 36Z15
write(dict(
    name="ultrastar36z15", layout="zoned",
    description="IBM Ultrastar 36Z15, 18.4 GB, 15000 RPM, Ultra160 SCSI (2001)",
    surfaces=6, zones=12, spt_first=430, spt_last=318, capacity_bytes=18.4e9,
    mech=dict(rpm=15000, head_switch_ms=0.8, single_ms=0.6, average_ms=3.4, full_ms=6.5),
    fw=fw(512 / 160e6 * 1e3, False, 8, 1000, "continuous", 64, "sptf"),
    power=dict(active_watts=39.0, idle_watts=22.3, standby=[
        level("standby", 4.15, 15000, 62.25, 26000, 904.8)]),
    provenance=[
        f"paper {GODA}, Table 2: 18.4 GB, 15000 RPM, average seek 3.4 ms, 55 MB/s",
        f"paper {GODA}, Table 2: active 39.0 W, idle 22.3 W, standby 4.15 W, spin-down 15.0 s / 62.25 J, spin-up 26.0 s / 904.8 J",
        "derived: outermost track = 55 MB/s x 4 ms per revolution / 512 B = 430 sectors",
        f"assumed: innermost track 0.74 of the outermost (Cheetah X15 ratio, {TRAX} Table 1) = 318 sectors",
        f"assumed: 6 surfaces, 12 zones, head switch 0.8 ms (15K class, {TRAX} Table 1), single-cylinder 0.6 ms, full stroke 6.5 ms",
        "assumed: no zero-latency access; Ultra160 SCSI; 4 MB cache as 8 segments of 1000 sectors; tagged queue of 64, SPTF",
    ]),
    ["IBM Ultrastar 36Z15 (18.4 GB model): hand-made from published figures.",
     "",
     f"From the paper ({GODA}), Table 2: 18.4 GB, 15000 RPM, average seek 3.4 ms,",
     "transfer rate 55 MB/s; power: active 39.0 W, idle 22.3 W, standby 4.15 W,",
     "spin-down 15.0 s and 62.25 J, spin-up 26.0 s and 904.8 J. These are the paper's",
     "figures and differ from the DRPM-literature defaults in spec.rs; the experiments",
     "reproduce this paper, so its figures are used.",
     "Derived: outermost track = 55 MB/s x 4 ms / 512 B = 430 sectors (zone 0).",
     "(The quoted rate is taken as the outermost zone's media rate; if it is a sustained",
     "rate that includes track switches, the real outermost track is up to ~15% larger.)",
     "Assumed (data-sheet class, not in the paper): innermost 0.74 of the outermost = 318",
     "sectors (the Cheetah X15's ratio in the traxtents paper's Table 1, also a 15K RPM",
     "drive); 6 surfaces; 12 zones; head switch 0.8 ms (Table 1's 15K drive);",
     "single-cylinder seek 0.6 ms; full stroke 6.5 ms; no zero-latency access; Ultra160",
     "SCSI (0.0032 ms per sector); 4 MB cache in 8 segments of 1000 sectors (>= 2 tracks);",
     "continuous read-ahead; 64-deep tagged queue, SPTF."] + [""] + RULES)

# ---------------------------------------------------------------- HGST Deskstar T7K250
write(dict(
    name="deskstar-t7k250", layout="zoned",
    description="Hitachi (HGST) Deskstar T7K250, 250 GB, 7200 RPM, SATA 1.5 Gb/s (2005)",
    surfaces=4, zones=20, spt_first=993, spt_last=546, capacity_bytes=250e9,
    mech=dict(rpm=7200, head_switch_ms=1.0, single_ms=1.0, average_ms=8.5, full_ms=17.0),
    fw=fw(512 / 150e6 * 1e3, False, 8, 2000, "continuous", 32, "sptf"),
    power=dict(active_watts=9.7, idle_watts=5.24, standby=[
        level("unload", 4.04, 700, 3.5, 700, 3.5),
        level("low-rpm", 2.72, 17000, 19.0, 17000, 19.0),
        level("non-spinning", 0.93, 700, 3.5, 700, 3.5)]),
    provenance=[
        f"paper {GODA}, Table 2: 250 GB, 7200 RPM, average seek 8.5 ms, 61 MB/s",
        f"paper {GODA}, Table 2: active 9.7 W, idle 5.24 W; standby levels unloaded (U) 4.04 W, 0.7 s / 3.5 J; low-RPM (L) 2.72 W, 17.0 s / 19.0 J; non-spinning (N) 0.93 W, 0.7 s / 3.5 J (each transition the same both ways)",
        "doubtful: the (N) transition row repeats the (U) row in our copy of the paper; 0.7 s is short for a full spin-up",
        "derived: outermost track = 61 MB/s x 8.33 ms per revolution / 512 B = 993 sectors",
        "assumed: innermost track 0.55 of the outermost (3.5-inch desktop platter) = 546 sectors",
        "assumed: 4 surfaces, 20 zones, head switch 1.0 ms, single-cylinder 1.0 ms, full stroke 17.0 ms",
        "assumed: no zero-latency access; SATA 1.5 Gb/s (150 MB/s); 8 MB cache as 8 segments of 2000 sectors; NCQ of 32, SPTF",
    ]),
    ["Hitachi (HGST) Deskstar T7K250: hand-made from published figures.",
     "",
     f"From the paper ({GODA}), Table 2: 250 GB, 7200 RPM, average seek 8.5 ms,",
     "transfer rate 61 MB/s; active 9.7 W, idle 5.24 W; three standby states:",
     "unloaded (U) 4.04 W, low-RPM (L) 2.72 W, non-spinning (N) 0.93 W; transitions",
     "(U) 0.7 s / 3.5 J, (L) 17.0 s / 19.0 J, (N) 0.7 s / 3.5 J (both directions).",
     "All three are standby levels 0 (U), 1 (L), 2 (N) of the [power] section. Doubtful:",
     "in our text of the paper the (N) transition row repeats the (U) row; 0.7 s is short",
     "for spinning a 3.5-inch disk up from rest. Kept as printed: the paper's remark that",
     "the mid-range drive works with RTOs as short as 30 s fits sub-second transitions.",
     "Derived: outermost track = 61 MB/s x 8.333 ms / 512 B = 993 sectors (zone 0).",
     "(The quoted rate is taken as the outermost zone's media rate; if it is a sustained",
     "rate that includes track switches, the real outermost track is up to ~15% larger.)",
     "Assumed (data-sheet class, not in the paper): innermost 0.55 of the outermost = 546",
     "sectors; 4 surfaces; 20 zones; head switch 1.0 ms; single-cylinder seek 1.0 ms;",
     "full stroke 17.0 ms; no zero-latency access; SATA 1.5 Gb/s = 150 MB/s (0.00341 ms",
     "per sector); 8 MB cache in 8 segments of 2000 sectors (>= 2 tracks); continuous",
     "read-ahead; NCQ of 32 with SPTF."] + [""] + RULES)

# ---------------------------------------------------------------- IBM DJNA-371350
write(dict(
    name="djna371350", layout="zoned",
    description="IBM Deskstar 22GXP DJNA-371350, 13.5 GB, 7200 RPM, ATA/66 (1999)",
    surfaces=6, zones=15, spt_first=277, spt_last=152, capacity_bytes=13.5e9,
    mech=dict(rpm=7200, head_switch_ms=1.0, single_ms=1.2, average_ms=9.0, full_ms=16.0),
    fw=fw(512 / 66.67e6 * 1e3, False, 4, 1000, "continuous", 1, "fcfs"),
    provenance=[
        f"paper {SHI}, Table 3: IBM DJNA371350, 7200 RPM, IDE ATA/66, 13.5 GB, 2 MB buffer, seek 9 ms, latency 4 ms, 17 MB/s",
        "derived: outermost track = 17 MB/s x 8.33 ms per revolution / 512 B = 277 sectors",
        "derived: ATA/66 = 66.67 MB/s, 0.00768 ms per sector",
        "assumed: innermost track 0.55 of the outermost = 152 sectors; 6 surfaces; 15 zones",
        "assumed: head switch 1.0 ms, single-cylinder 1.2 ms, full stroke 16.0 ms",
        "assumed: no zero-latency access; 2 MB buffer as 4 segments of 1000 sectors; no command queueing (ATA/66)",
        NO_POWER,
    ]),
    ["IBM Deskstar 22GXP DJNA-371350: hand-made from published figures.",
     "",
     f"From the paper ({SHI}), Table 3: 7200 RPM, IDE ATA/66, 13.5 GB, 2 MB data buffer,",
     "seek time 9 ms (taken as the average seek), latency 4 ms (= half a revolution at",
     "7200 RPM, consistent), transfer rate 17 MB/s.",
     "Derived: outermost track = 17 MB/s x 8.333 ms / 512 B = 277 sectors (zone 0);",
     "ATA/66 carries 66.67 MB/s: 0.00768 ms per sector.",
     "(The quoted rate is taken as the outermost zone's media rate; if it is a sustained",
     "rate that includes track switches, the real outermost track is up to ~15% larger.)",
     "Assumed (data-sheet class, not in the paper): innermost 0.55 of the outermost = 152",
     "sectors; 6 surfaces; 15 zones; head switch 1.0 ms; single-cylinder seek 1.2 ms;",
     "full stroke 16.0 ms; no zero-latency access; the 2 MB buffer as 4 segments of 1000",
     "sectors (>= 2 tracks); continuous read-ahead; no command queueing (ATA/66 has none).",
     "Power: not in any paper; spinstack's generic defaults."] + [""] + RULES)
