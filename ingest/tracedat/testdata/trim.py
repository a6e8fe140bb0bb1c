# Trim a v6 trace.dat (one instance buffer) to its first N pages per CPU,
# without kallsyms; optionally flag page K of CPU 0 with missed events.
import struct, sys
src, dst, npages = sys.argv[1], sys.argv[2], int(sys.argv[3])
lost = [tuple(map(int, a.split(':'))) for a in sys.argv[4:]]  # cpu:page:count (-1 = flag only)
b = open(src, 'rb').read()
p = 0
def take(n):
    global p
    v = b[p:p+n]; p += n; return v
def u16(): return struct.unpack('<H', take(2))[0]
def u32(): return struct.unpack('<I', take(4))[0]
def u64(): return struct.unpack('<Q', take(8))[0]
out = bytearray()
start = p
take(10); 
while b[p] != 0: p += 1
p += 1
take(2); ps = u32()
take(12); n = u64(); take(n); take(13); n = u64(); take(n)
c = u32()
for _ in range(c): n = u64(); take(n)
ns = u32()
for _ in range(ns):
    while b[p] != 0: p += 1
    p += 1
    c = u32()
    for _ in range(c): n = u64(); take(n)
out += b[start:p]
ks = u32(); take(ks)
out += struct.pack('<I', 0)
s2 = p
n = u32(); take(n)  # printk
n = u64(); take(n)  # cmdlines
cpus = u32()
out += b[s2:p-4]
assert take(10) == b'options  \0'
opts = []
while True:
    oid = u16()
    if oid == 0: break
    sz = u32(); opts.append((oid, bytearray(take(sz))))
assert take(10) == b'flyrecord\0'
top = [(u64(), u64()) for _ in range(cpus)]
bufs = [o for o in opts if o[0] == 3]
assert len(bufs) == 1
boff = struct.unpack('<Q', bufs[0][1][:8])[0]
q = boff
assert b[q:q+10] == b'flyrecord\0'; q += 10
inst = [struct.unpack('<QQ', b[q+16*i:q+16*i+16]) for i in range(cpus)]
# layout: header, options, top table (all empty), instance table, pages
optbytes = bytearray()
for oid, d in opts:
    optbytes += struct.pack('<HI', oid, len(d)) + d
optbytes += struct.pack('<H', 0)
clk = struct.pack('<Q', 7) + b'[local]'
hdr_len = len(out) + 4 + 10 + len(optbytes) + 10 + 16*cpus + len(clk)
inst_off = hdr_len
for oid, d in opts:
    if oid == 3: d[:8] = struct.pack('<Q', inst_off)
optbytes = bytearray()
for oid, d in opts:
    optbytes += struct.pack('<HI', oid, len(d)) + d
optbytes += struct.pack('<H', 0)
out += struct.pack('<I', cpus) + b'options  \0' + optbytes + b'flyrecord\0'
for i in range(cpus): out += struct.pack('<QQ', 0, 0)
out += clk
assert len(out) == inst_off
out += b'flyrecord\0'
tbl_at = len(out)
out += b'\0' * (16*cpus) + clk
while len(out) % ps: out += b'\0'
for i, (o, sz) in enumerate(inst):
    keep = min(sz, npages*ps)
    data = bytearray(b[o:o+keep])
    for (lc, lp, cnt) in lost:
        if lc != i: continue
        pg = lp*ps
        commit = struct.unpack('<Q', data[pg+8:pg+16])[0]
        size = commit & 0x3fffffff
        if cnt >= 0:
            assert 16+size+8 <= ps, 'no room for the count'
            data[pg+16+size:pg+16+size+8] = struct.pack('<Q', cnt)
            commit |= (1<<31)|(1<<30)
        else:
            commit |= (1<<31)
        data[pg+8:pg+16] = struct.pack('<Q', commit)
    out[tbl_at+16*i:tbl_at+16*i+16] = struct.pack('<QQ', len(out), keep)
    out += data
open(dst, 'wb').write(out)
