fn main() {
    bpf::skeleton("slabratetop");
}
