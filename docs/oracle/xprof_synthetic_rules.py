"""XProf 2.24's rules for command buffers, scope range ids and Launch Stats, found by running its
own conversion on small synthetic XPlanes (the rules are not in openxla/xprof's public tree at
the version read). Prints, per case, the derived GPU lines XProf shows.

usage: python3 -m grpc_tools.protoc -Iproto --python_out=DIR proto/xplane.proto
       PYTHONPATH=DIR python3 docs/oracle/xprof_synthetic_rules.py [--tracetui BIN]
(pip install xprof grpcio-tools). With --tracetui, also prints tracetui's `summary --json`
line counts for the same file, so each case is compared."""
import json, subprocess, sys, tempfile, os
import xplane_pb2
def build(kernels, roots, launches, path):
    sp = xplane_pb2.XSpace()
    h = sp.planes.add(); h.id=1; h.name='/host:CPU'
    g = sp.planes.add(); g.id=2; g.name='/device:GPU:0'
    def sm(p, name):
        for k,v in p.stat_metadata.items():
            if v.name==name: return k
        k=len(p.stat_metadata)+1; p.stat_metadata[k].id=k; p.stat_metadata[k].name=name; return k
    def em(p, name):
        for k,v in p.event_metadata.items():
            if v.name==name: return k
        k=len(p.event_metadata)+1; p.event_metadata[k].id=k; p.event_metadata[k].name=name; return k
    def add(p, line, name, start, dur, stats):
        e=line.events.add(); e.metadata_id=em(p,name); e.offset_ps=start; e.duration_ps=dur
        for k,v in stats.items():
            s=e.stats.add(); s.metadata_id=sm(p,k)
            if isinstance(v,str): s.str_value=v
            elif k in ("cuda_graph_id","cuda_graph_node_id","correlation_id","cuda_graph_exec_id"): s.uint64_value=v
            else: s.int64_value=v
    hl=h.lines.add(); hl.id=1; hl.name='python3'; hl.timestamp_ns=0
    evs=[(s,-d,0,('train',{'_r':1,'step_num':n})) for (s,d,n) in roots]+[(s,-d,1,(name,{'correlation_id':c,'device_id':0})) for (s,d,c,name) in launches]
    for (s,nd,_,(name,st)) in sorted(evs, key=lambda x:(x[0],x[1],x[2])): add(h,hl,name,s,-nd,st)
    gl=g.lines.add(); gl.id=14; gl.name='Stream #14(Compute)'; gl.timestamp_ns=0
    for k in kernels:
        name,s,d,st=k
        add(g,gl,name,s,d,st)
    open(path,'wb').write(sp.SerializeToString())
def run(path, names=True):
    out=subprocess.run([sys.executable, XPROF_LINES, path]+(['--names'] if names else []),capture_output=True,text=True).stdout
    return json.loads(out)


XPROF_LINES = os.environ.get("XPROF_LINES", "xprof_lines.py")  # the team's tools/xprof_lines.py; set XPROF_LINES to its path
U64 = ("cuda_graph_id", "cuda_graph_node_id", "correlation_id", "cuda_graph_exec_id")


def K(name, s, c, r, gid=5, mod="m", grp=None, hlo="command_buffer_1", kd=True):
    st = {"correlation_id": c, "scope_range_id": r, "cuda_graph_id": gid,
          "cuda_graph_node_id": 1, "hlo_op": hlo, "hlo_module": mod, "program_id": 7}
    if kd:
        st["kernel_details"] = "regs:1"
    if grp is not None:
        st["group_id"] = grp
    return (name, s, 1000, {k: v for k, v in st.items() if v is not None})


ROOT = [(0, 100000, 0)]
L1 = [(1000, 100, 1, "cuGraphLaunch")]
L2 = L1 + [(2000, 100, 2, "cuGraphLaunch")]
CASES = {
    "launches differ, scope differs": ([K("k1", 10000, 1, 11), K("k2", 12000, 1, 11), K("k1", 20000, 2, 12), K("k2", 22000, 2, 12)], ROOT, L2),
    "launches differ, same scope": ([K("k1", 10000, 1, 11), K("k2", 12000, 1, 11), K("k1", 20000, 2, 11), K("k2", 22000, 2, 11)], ROOT, L2),
    "same launch, scope differs": ([K("k1", 10000, 1, 11), K("k2", 12000, 1, 11), K("k1", 20000, 1, 12), K("k2", 22000, 1, 12)], ROOT, L1),
    "no kernel_details": ([K("k1", 10000, 1, 11, kd=False), K("k2", 12000, 1, 11, kd=False)], ROOT, L1),
    "graph id 0": ([K("k1", 10000, 1, 11, gid=0), K("k2", 12000, 1, 11, gid=0)], ROOT, L1),
    "interleaved graphs": ([K("k1", 10000, 1, 11), K("k2", 12000, 1, 11, gid=6), K("k3", 14000, 1, 11)], ROOT, L1),
    "groups differ": ([K("k1", 10000, 1, 11, grp=3), K("k2", 12000, 1, 11, grp=4)], ROOT, []),
    "module changes inside a launch": ([K("k1", 10000, 1, 11), K("k2", 12000, 1, 11, mod="m2"), K("k3", 14000, 1, 11)], ROOT, L1),
    "op changes inside a launch": ([K("k1", 10000, 1, 11), K("k2", 12000, 1, 11, hlo="x"), K("k3", 14000, 1, 11)], ROOT, L1),
    "scope absent, then set": ([K("k1", 10000, 1, None), K("k2", 12000, 1, 11), K("k3", 14000, 1, 12)], ROOT, L1),
    "launch stats, nested op levels": (
        [K("k1", 10000, 1, 11, hlo="fusion.1::inner"), K("k2", 12000, 1, 11, hlo="fusion.1::inner"),
         K("k1", 20000, 2, 12, hlo="fusion.1::inner"), K("k1", 210000, 3, 13, hlo="fusion.1::inner"),
         K("k2", 212000, 4, 13, gid=6, hlo="fusion.1::inner"), K("k9", 400000, 5, 14, hlo="fusion.1::inner")],
        [(0, 100000, 0), (200000, 100000, 1)],
        [(1000, 100, 1, "LaunchKernel"), (2000, 300, 2, "cuGraphLaunch"), (201000, 500, 3, "LaunchKernel"),
         (202000, 700, 4, "LaunchKernel"), (390000, 100, 5, "LaunchKernel")]),
}

if __name__ == "__main__":
    binary = sys.argv[sys.argv.index("--tracetui") + 1] if "--tracetui" in sys.argv else None
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "case.xplane.pb")
        for name, (ks, roots, ls) in CASES.items():
            build(ks, roots, ls, path)
            r = run(path)
            print("==", name)
            for k, v in r.items():
                if "GPU" in k and "Stream" not in k:
                    print("   xprof   ", k, {n: c for n, c in v.items()})
            if binary:
                s = json.loads(subprocess.run([binary, "summary", path, "--json"], capture_output=True,
                                              text=True, check=True).stdout)
                for t in s["captures"][0]["tracks"]:
                    if t["process"].startswith("/device") and not t["name"].startswith("Stream"):
                        print("   tracetui", t["process"], "/", t["name"], t["events"])
