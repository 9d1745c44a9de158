#!/usr/bin/env python3
"""Generates the hand-made (data-sheet) drives of spinstack's catalog.
Rules (stated again in each file header):
  * zone i of n: spt_i = floor(first + (last-first)*i/(n-1) + 0.5); equal cylinder counts per
    zone (the last zone takes the remainder); cylinder count chosen so that the capacity
    matches the stated capacity.
  * track skew   = ceil(head_switch_ms / sector_ms), sector_ms = 60000/rpm/spt
  * cylinder skew = ceil(max(single_cylinder_ms, head_switch_ms) / sector_ms): a cylinder
    switch also changes head (drives.py says why)
"""
import bisect, math, random, sys, os, tomllib

OUT = sys.argv[1]
# The checked-in catalog (a source for drives whose curve has another's shape).
CATALOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'crates', 'disk',
                       'catalog')

def sector_ms(rpm, spt):
    return 60000.0 / rpm / spt

def skew(ms, rpm, spt):
    return math.ceil(ms / sector_ms(rpm, spt) - 1e-9)

def linear_spt(first, last, n):
    return [math.floor(first + (last - first) * i / (n - 1) + 0.5) for i in range(n)]

def split_cyls(cylinders, n, align=1):
    per = (cylinders // n) // align * align
    bounds = []
    c = 0
    for i in range(n):
        hi = cylinders - 1 if i == n - 1 else c + per - 1
        bounds.append((c, hi))
        c = hi + 1
    return bounds

def q(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'

def fmt(x):
    if isinstance(x, bool):
        return 'true' if x else 'false'
    if isinstance(x, float):
        r = repr(x)
        return r if ('.' in r or 'e' in r) else r + '.0'
    if isinstance(x, str):
        return q(x)
    return str(x)

def firmware_toml(fw):
    o = fw['overheads']
    c = fw['cache']
    lines = ['[firmware]',
             f"bus_sector_transfer_ms = {fmt(round(fw['bus_ms'], 6))}",
             f"per_request_overhead_ms = 0.0",
             f"overhead_time_scale = 1.0",
             f"immediate_buffer_read = {fmt(fw['zero_latency'])}",
             f"immediate_buffer_write = {fmt(fw['zero_latency'])}",
             '', '[firmware.overheads]']
    for k in ['read_hit_after_read_ms', 'read_hit_after_write_ms', 'read_miss_after_read_ms',
              'read_miss_after_write_ms', 'write_hit_after_read_ms', 'write_hit_after_write_ms',
              'write_miss_after_read_ms', 'write_miss_after_write_ms', 'read_completion_ms',
              'write_completion_ms', 'data_preparation_ms', 'first_reselect_ms',
              'other_reselect_ms', 'read_disconnect_after_read_ms',
              'read_disconnect_after_write_ms', 'write_disconnect_ms']:
        lines.append(f"{k} = {fmt(o.get(k, 0.0))}")
    lines += ['', '[firmware.bus]', 'hold_bus_for_whole_read = false',
              'hold_bus_for_whole_write = false', 'never_disconnect = false']
    if fw.get('whole_track_before_bus'):
        lines.append('zero_latency_track_whole_before_bus = true')
    if fw.get('seek_after_write_data'):
        lines.append('write_through_seek_after_data = true')
    lines += ['', '[firmware.cache]']
    cache = dict(enabled=True, segments=c['segments'], segment_sectors=c['segment_sectors'],
                 max_write_segments=1, separate_write_segment=False, low_water_mark=0.0,
                 high_water_mark=0.0, watermark_by_request_size=True,
                 read_ahead=c['read_ahead'], min_read_ahead_sectors=0,
                 max_read_ahead_sectors=c['segment_sectors'], read_ahead_over_requested=0,
                 # A sequential stream keeps the read-ahead going: a hit on the
                 # prefetching segment continues it, and a read of the very block
                 # the read-ahead is about to bring waits for it instead of
                 # missing by a revolution (DiskSim's 'Read-ahead on idle hit' and
                 # 'Allow almost read hits'; real firmware streams from its buffer).
                 read_ahead_on_idle_hit=True,
                 # ... and on past the track it is reading, to its limit (DiskSim's
                 # controller keeps a running access going when a hit takes it over).
                 read_hit_keeps_read_ahead=True,
                 # Reading the sectors that pass under the head before the target is
                 # zero-latency access in effect: only drives that have it do it.
                 read_any_free_blocks=fw['zero_latency'],
                 allow_almost_read_hits=True, read_hits_on_write_data=True,
                 fast_write_level=0, combine_sequential_writes=True,
                 stop_prefetch_in_sector=False, disconnect_write_if_seek=False,
                 write_hit_stops_prefetch=True, read_directly_to_buffer=True,
                 immediate_transfer_partial_hit=True, preseek_level=0)
    if fw.get('abandon_read_ahead_positioning'):
        cache['abandon_read_ahead_positioning'] = True
    if fw.get('almost_read_hits_ahead_of_prefetch'):
        cache['almost_read_hits_ahead_of_prefetch'] = True
    for k, v in cache.items():
        lines.append(f"{k} = {fmt(v)}")
    lines += ['', '[firmware.queue]', f"max_queue_length = {fw['queue']}",
              f"policy = {q(fw['policy'])}"]
    return lines

OVERHEADS = dict(read_hit_after_read_ms=0.1, read_hit_after_write_ms=0.1,
                 read_miss_after_read_ms=0.15, read_miss_after_write_ms=0.15,
                 write_hit_after_read_ms=0.1, write_hit_after_write_ms=0.1,
                 write_miss_after_read_ms=0.2, write_miss_after_write_ms=0.2)

def power_toml(p):
    """[power] with its standby levels, shallowest first."""
    if p is None:
        return []
    lines = ['', '[power]', f"active_watts = {fmt(float(p['active_watts']))}",
             f"idle_watts = {fmt(float(p['idle_watts']))}"]
    for level in p['standby']:
        lines += ['', '[[power.standby]]', f'name = "{level["name"]}"']
        for k in ['watts', 'enter_ms', 'enter_joules', 'exit_ms', 'exit_joules']:
            lines.append(f"{k} = {fmt(float(level[k]))}")
    return lines

def mech_toml(m):
    lines = ['[mechanics]', f"rpm = {m['rpm']}", f"head_switch_ms = {fmt(m['head_switch_ms'])}",
             'write_settle_ms = 0.0', '', '[mechanics.seek]']
    if 'points' in m:
        lines += ['kind = "extracted"', '', 'points = [']
        lines += [f"    {{ distance_cylinders = {d}, time_ms = {fmt(t)} }},"
                  for d, t in m['points']]
        return lines + [']']
    return lines + ['kind = "published"',
                    f"single_cylinder_ms = {fmt(m['single_ms'])}",
                    f"average_ms = {fmt(m['average_ms'])}",
                    f"full_stroke_ms = {fmt(m['full_ms'])}"]

def extracted_seek(points):
    """The drive model's lookup of a measured curve (DiskSim's): (0, 0) in front,
    exact match, else linear interpolation (or extrapolation past the last point)
    between the points around d."""
    pts = [(0, 0.0)] + list(points)
    keys = [p[0] for p in pts]
    def seek(dist):
        if dist == 0:
            return 0.0
        i = min(bisect.bisect_left(keys, dist), len(pts) - 1)
        (d0, t0), (d1, t1) = pts[i - 1], pts[i]
        return t0 + (t1 - t0) * (dist - d0) / (d1 - d0)
    return seek

def random_seek_mean(seek, cylinders):
    """Mean of `seek` over random seeks that move (distance d >= 1 weighted N - d), the
    way a data sheet's average seek and PublishedSeek::fit are defined."""
    total = weight = 0.0
    for dist in range(1, cylinders):
        total += (cylinders - dist) * seek(dist)
        weight += cylinders - dist
    return total / weight

def scaled_shape(m, cylinders):
    """A seek table for a drive of `cylinders` cylinders with the shape of another
    drive's measured curve (m['shape']: its catalog file and cylinder count):
    distances scaled by the stroke ratio (short seeks, which settling dominates, not
    below the measured single-cylinder point), times scaled so that random seeks
    average m['average_ms']."""
    with open(m['shape']['file'], 'rb') as f:
        source = tomllib.load(f)['mechanics']['seek']['points']
    measured = extracted_seek([(p['distance_cylinders'], p['time_ms']) for p in source])
    ratio = m['shape']['cylinders'] / cylinders
    shape = lambda dist: measured(max(1.0, dist * ratio)) if dist else 0.0
    scale = m['average_ms'] / random_seek_mean(shape, cylinders)
    distances = sorted({1} | {max(1, round(p['distance_cylinders'] / ratio)) for p in source})
    return [(dist, round(scale * shape(dist), 4)) for dist in distances if dist < cylinders]

def drive_seek(m, cylinders):
    """The seek curve the model will use for mechanics `m` on `cylinders` cylinders."""
    if 'shape' in m:
        return extracted_seek(scaled_shape(m, cylinders))
    return published_seek(m['single_ms'], m['average_ms'], m['full_ms'], cylinders)

def head_toml(d, header):
    lines = ['# ' + l if l else '#' for l in header]
    lines += ['', f"name = {q(d['name'])}", f"description = {q(d['description'])}",
              'provenance = [']
    lines += [f"    {q(p)}," for p in d['provenance']]
    lines += [']', '']
    return lines

def published_seek(single, average, full, cylinders):
    """The drive model's data-sheet seek curve (crates/disk/src/drive/mechanics.rs,
    PublishedSeek::fit): t(d) = single + a*sqrt(d-1) + b*(d-1) ms for d >= 1, with a
    and b solved so that t(N-1) = full and the mean over random seeks = average."""
    n = float(max(cylinders, 3))
    weight = root = linear = 0.0
    for dist in range(1, max(cylinders, 3)):
        w = n - dist
        weight += w
        root += w * math.sqrt(dist - 1)
        linear += w * (dist - 1)
    mean_root, mean_linear, x_full = root / weight, linear / weight, n - 2
    det = math.sqrt(x_full) * mean_linear - x_full * mean_root
    a = ((full - single) * mean_linear - x_full * (average - single)) / det
    b = (math.sqrt(x_full) * (average - single) - mean_root * (full - single)) / det
    return lambda dist: 0.0 if dist == 0 else single + a * math.sqrt(dist - 1) + b * (dist - 1)

def zone_seek_stats(seek, width):
    """Mean and standard deviation of the seek between two independent, uniformly
    random cylinders of a zone `width` cylinders wide (distance 0 costs no seek)."""
    mean = square = 0.0
    for dist in range(width):
        p = (width if dist == 0 else 2 * (width - dist)) / width / width
        t = seek(dist)
        mean += p * t
        square += p * t * t
    return mean, math.sqrt(max(square - mean * mean, 0.0))

def pack_exact(d, spts, first_width):
    """Zone widths with zone 0 `first_width` cylinders (moved by at most a few to make
    the sum exact) and the others equal, whose capacity is exactly the stated sector
    count `d['capacity_sectors']`: zone 1 and the last zone absorb the remainder."""
    target = d['capacity_sectors'] // d['surfaces']
    best = None
    for w0 in range(first_width - 6, first_width + 7):
        for per in range(1, target // sum(spts[1:])  + 2):
            for d1 in range(-30, 31):
                rest = target - w0 * spts[0] - per * sum(spts[1:-1]) - d1 * spts[1]
                if rest <= 0 or rest % spts[-1]:
                    continue
                last = rest // spts[-1]
                if abs(last - per) > 30:
                    continue
                cost = (abs(w0 - first_width) * 10 + abs(d1) + abs(last - per), w0, per, d1, last)
                best = cost if best is None or cost < best else best
    _, w0, per, d1, last = best
    return [w0, per + d1] + [per] * (len(spts) - 3) + [last]

def infer_first_zone(d, spts):
    """The first zone's width (cylinders) at which random seeks inside it average
    d['first_zone_mean_seek_ms'] on the drive's own seek curve, with the drive's
    capacity kept exact. Returns (zone widths, mean, sd) for the header."""
    m = d['mech']
    lo, hi = 10, 20000
    while hi - lo > 1:
        mid = (lo + hi) // 2
        widths = pack_exact(d, spts, mid)
        seek = drive_seek(m, sum(widths))
        if zone_seek_stats(seek, widths[0])[0] < d['first_zone_mean_seek_ms']:
            lo = mid
        else:
            hi = mid
    widths = pack_exact(d, spts, hi)
    seek = drive_seek(m, sum(widths))
    return (widths,) + zone_seek_stats(seek, widths[0])

def zoned(d):
    m = d['mech']
    spts = linear_spt(d['spt_first'], d['spt_last'], d['zones'])
    avg = sum(spts) / len(spts)
    if 'first_zone_mean_seek_ms' in d:
        widths, mean, sd = infer_first_zone(d, spts)
        d['inferred'] = (widths, mean, sd)
        cyl = sum(widths)
        if 'shape' in m:
            # The table the model will use; the cylinder skew covers its first point.
            m['points'] = scaled_shape(m, cyl)
            m['single_ms'] = m['points'][0][1]
        bounds, c = [], 0
        for w in widths:
            bounds.append((c, c + w - 1))
            c += w
    else:
        cyl = d.get('cylinders') or round(d['capacity_bytes'] / 512 / (d['surfaces'] * avg))
        bounds = split_cyls(cyl, d['zones'])
    lines = ['[layout]', 'kind = "zoned"', f"surfaces = {d['surfaces']}", f"cylinders = {cyl}",
             'surface_order = "fixed"', 'sparing = "slip_to_end_of_disk"',
             'sparing_range_cylinders = 1', '']
    sizes = [(hi - lo + 1) * d['surfaces'] * spt for (lo, hi), spt in zip(bounds, spts)]
    slips = drawn_slips(d, sizes)
    for (lo, hi), spt, zone_slips in zip(bounds, spts, slips):
        lines += ['[[layout.zones]]', f"first_cylinder = {lo}", f"last_cylinder = {hi}",
                  f"sectors_per_track = {spt}",
                  f"track_skew_sectors = {skew(m['head_switch_ms'], m['rpm'], spt)}",
                  f"cylinder_skew_sectors = {skew(max(m['single_ms'], m['head_switch_ms']), m['rpm'], spt)}"]
        if zone_slips:
            lines += [f"slips = [{', '.join(map(str, zone_slips))}]"]
        lines += ['']
    return lines, cyl, sum(sizes), spts

def drawn_slips(d, zone_sectors):
    """Slipped primary defects per zone (zone-relative physical sectors, sorted): as
    many as the drive named by d['slips']['file'] has (its DIXtrac-measured list),
    placed uniformly over this drive's physical sectors by a fixed seed. Under
    slip-to-end sparing each one shifts every later LBN by a sector, as a real
    format's slips do; where they lie is not published, so only their count is
    carried over."""
    if 'slips' not in d:
        return [[] for _ in zone_sectors]
    with open(d['slips']['file'], 'rb') as f:
        source = tomllib.load(f)
    count = sum(len(z.get('slips', [])) for z in source['layout']['zones'])
    d['slips']['count'] = count
    total = sum(zone_sectors)
    drawn = sorted(random.Random(d['slips']['seed']).sample(range(total), count))
    per_zone, start = [], 0
    for size in zone_sectors:
        per_zone.append([s - start for s in drawn if start <= s < start + size])
        start += size
    return per_zone

def serpentine(d):
    m = d['mech']
    s0 = linear_spt(d['outer'][0], math.floor(d['outer'][0] * d['inner_ratio'] + 0.5), d['zones'])
    s1 = linear_spt(d['outer'][1], math.floor(d['outer'][1] * d['inner_ratio'] + 0.5), d['zones'])
    cyl = d['cylinders']
    bounds = split_cyls(cyl, d['zones'], align=d['band'])
    spt_max = max(d['outer'])
    lines = ['[layout]', 'kind = "serpentine"', f"surfaces = 2", f"cylinders = {cyl}",
             f"band_cylinders = {d['band']}",
             f"track_skew_sectors = {skew(m['single_ms'], m['rpm'], spt_max)}",
             f"surface_switch_skew_sectors = {skew(m['head_switch_ms'], m['rpm'], spt_max)}", '']
    cap = 0
    for (lo, hi), a, b in zip(bounds, s0, s1):
        lines += ['[[layout.zones]]', f"first_cylinder = {lo}", f"last_cylinder = {hi}",
                  f"sectors_per_track_by_surface = [{a}, {b}]", '']
        cap += (hi - lo + 1) * (a + b)
    return lines, cyl, cap, s0 + s1

def write(d, header):
    if d['layout'] == 'zoned':
        lay, cyl, cap, spts = zoned(d)
    else:
        lay, cyl, cap, spts = serpentine(d)
    stated = d['capacity_bytes'] / 512
    if 'capacity_sectors' in d and cap != d['capacity_sectors']:
        sys.exit(f"{d['name']}: {cap} sectors, not the required {d['capacity_sectors']}")
    if 'inferred' in d:
        widths, mean, sd = d['inferred']
        header = header + ['', f"Inferred: zone 0 is {widths[0]} cylinders wide "
                           f"({100 * widths[0] / cyl:.1f}% of the stroke); zones 1-{len(widths) - 1} "
                           f"are {widths[2]} wide (zone 1 {widths[1]}, the last {widths[-1]}),",
                           f"so that random seeks in zone 0 average {mean:.3f} ms "
                           f"(sd {sd:.3f} ms) on this drive's seek curve."]
    if 'shape' in d['mech']:
        pts = d['mech']['points']
        header = header + [f"Seek table: {len(pts)} points, {pts[0][1]} ms at 1 cylinder, "
                           f"{pts[-1][1]} ms at {pts[-1][0]}."]
    slipped = d.get('slips', {}).get('count', 0)
    lbns = f", {slipped} of them slipped: {cap - slipped} LBNs" if slipped else ""
    header = header + ['', f"Derived: {cyl} cylinders, {cap} sectors = {cap*512/1e9:.2f} GB "
                       f"({100*(cap-stated)/stated:+.2f}% against the stated capacity){lbns}."]
    lines = head_toml(d, header) + lay + mech_toml(d['mech']) + [''] + firmware_toml(d['fw']) \
        + power_toml(d.get('power'))
    path = os.path.join(OUT, d['name'] + '.toml')
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print(f"{d['name']}: cyl={cyl} cap={cap} ({cap*512/1e9:.3f} GB, "
          f"{100*(cap-stated)/stated:+.2f}%) spt {min(spts)}..{max(spts)}")

exec(open(os.path.join(os.path.dirname(__file__), 'drives.py')).read())
