"""Keep only the named x86 CPU variants of llama.cpp's dispatch build (`GGML_CPU_ALL_VARIANTS`) in an unpacked
llama-cpp-python source tree: the other `ggml_add_cpu_backend_variant(...)` lines of ggml/src/CMakeLists.txt are
commented out, so they are never compiled. `make LLAMA_BUILD=dispatch` runs it before building the wheel.

    python tools/llama_variants.py SRC_DIR haswell skylakex icelake cooperlake zen4 alderlake

The AMX variant (sapphirerapids) is never kept: its q8_0/q4_K kernel crashed (llama.cpp issue 20824, see 07a_llama).
Variants below x86-64-v3 are left out too: rlnb's llama.cpp needs AVX2, FMA, F16C and BMI2 (`check_llama_cpu`)."""
import re, sys
from pathlib import Path

NEVER = {'sapphirerapids'}

def keep_variants(src:Path, keep:list[str]) -> list[str]:
    "Comment out every x86 variant of `src`'s ggml/src/CMakeLists.txt not in `keep`; the variants left, in file order."
    if bad := NEVER & set(keep): raise ValueError(f"{', '.join(sorted(bad))}: the AMX variant is never built")
    p = Path(src)/'vendor'/'llama.cpp'/'ggml'/'src'/'CMakeLists.txt'
    text, kept = p.read_text(), []
    x86 = text[text.index('if (GGML_SYSTEM_ARCH STREQUAL "x86")'):text.index('elseif(GGML_SYSTEM_ARCH STREQUAL "ARM")')]
    def edit(m):
        name = m.group(2)
        if name in keep: kept.append(name); return m.group(0)
        return f"{m.group(1)}# {m.group(0).lstrip()}"
    new = re.sub(r'^(\s*)ggml_add_cpu_backend_variant\((\w+)[^)]*\)', edit, x86, flags=re.M)
    if missing := set(keep) - set(kept): raise ValueError(f"no such x86 variant in {p}: {', '.join(sorted(missing))}")
    p.write_text(text.replace(x86, new))
    return kept

if __name__ == '__main__':
    try: print('kept:', ' '.join(keep_variants(Path(sys.argv[1]), sys.argv[2:])))
    except ValueError as e: sys.exit(f'tools/llama_variants.py: {e}')
