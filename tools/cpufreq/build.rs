fn main() {
    bpf::skeleton("cpufreq");
}
