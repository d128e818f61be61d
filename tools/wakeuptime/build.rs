fn main() {
    bpf::skeleton("wakeuptime");
}
