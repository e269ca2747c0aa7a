#!/usr/bin/env python3
"""Training logs as the frameworks print them, for `snapdiff curve` (issue 27).

Run from anywhere: python3 testdata/curve/make_frameworks.py. Writes the logs under
testdata/curve/frameworks/ and frameworks/truth.json: per log the slope the figures were made
with (bytes per step, per second or per sample), the verdict and what else the tests compare
against. Each writer names the framework function whose format string it follows (read in
the framework's public source) and applies that function's unit rule. Deterministic.
"""
import json
import os
import random

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "frameworks")
GiB, MiB, KiB = 1 << 30, 1 << 20, 1 << 10
truth = {}


def write(name, lines, end="\n", last_newline=True):
    with open(os.path.join(HERE, name), "w", newline="") as f:
        f.write(end.join(lines) + (end if last_newline else ""))


# torchtitan/tools/utils.py Color: 8 colours and two 24-bit ones
class Color:
    red, green, blue, cyan, magenta = "\033[31m", "\033[32m", "\033[34m", "\033[36m", "\033[35m"
    orange, turquoise, yellow, reset = ("\033[38;2;255;165;0m", "\033[38;2;54;234;195m",
                                        "\033[33m", "\033[39m")


def torchtitan_log(step, loss, grad_norm, max_reserved_gib, pct, tps, tflops, mfu):
    """torchtitan/components/metrics.py MetricsProcessor.log's logger.info line."""
    c = Color
    return (f"{c.red}step: {step:2}  "
            f"{c.green}loss: {loss:7.4f}  "
            f"{c.orange}grad_norm: {grad_norm:7.4f}  "
            f"{c.turquoise}memory: {max_reserved_gib:5.2f}GiB"
            f"({pct:.2f}%)  "
            f"{c.blue}tps: {round(tps):,}  "
            f"{c.cyan}tflops: {tflops:,.2f}  "
            f"{c.magenta}mfu: {mfu:.2f}%{c.reset}")


# 1. torchtitan, 4 ranks under torchrun ([rankN]: prefixes, LOG_RANK=0,1,2,3); rank 2's peak
#    creeps 1 MiB/step; a validation line; an OOM on rank 3 at the end
rng = random.Random(27)
cap = 79.11 * GiB
lines = []
for r in range(4):
    lines.append(f"[rank{r}]:[titan] 2026-05-01 12:00:00,000 - root - INFO - CUDA capacity: "
                 f"NVIDIA H100 80GB HBM3 with 79.11GiB memory")
steps = [1] + list(range(10, 3010, 10))
for k, step in enumerate(steps):
    for r in range(4):
        peak = 35 * GiB + rng.randint(0, 8) * MiB + (MiB * step if r == 2 else 0)
        body = torchtitan_log(step, 8 - step / 1000, 1.2, peak / GiB, 100 * peak / cap,
                              3090 + rng.randint(0, 900), 1179.96, 18.2)
        lines.append(f"[rank{r}]:[titan] 2026-05-01 12:{k // 60 % 60:02d}:{k % 60:02d},123 - "
                     f"root - INFO - {body}")
    if step == 1500:
        lines.append(f"[rank0]:[titan] 2026-05-01 12:30:00,000 - root - INFO - "
                     f"{Color.yellow}validate step: 1500  {Color.green}loss:  5.1234  "
                     f"{Color.turquoise}memory: 60.00GiB(75.84%)  {Color.blue}tps: 9,999"
                     f"{Color.reset}")
oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a "
       "total capacity of 79.11 GiB of which 1.50 GiB is free. Including non-PyTorch memory, "
       "this process has 77.60 GiB memory in use. Of the allocated memory 74.25 GiB is "
       "allocated by PyTorch, and 2.10 GiB is reserved by PyTorch but unallocated. If reserved "
       "but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:"
       "True to avoid fragmentation.  See documentation for Memory Management  "
       "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
lines += ["[rank3]: Traceback (most recent call last):",
          '[rank3]:   File "/opt/torchtitan/torchtitan/train.py", line 400, in train_step',
          "[rank3]: " + oom,
          "[rank3]:[W501 12:59:59.000000000 ProcessGroupNCCL.cpp:1250] Warning: destroying",
          "E0501 12:59:59.000000 123 torch/distributed/elastic/multiprocessing/api.py:869] "
          "failed (exitcode: 1) local_rank: 3 (pid: 4567) of binary: /usr/bin/python3"]
write("torchtitan.log", lines)
truth["torchtitan.log"] = {
    "format": "torchtitan", "measure": "max_reserved", "ranks": [0, 1, 2, 3], "creeping_rank": 2,
    "slope": MiB, "samples_per_rank": len(steps),
    "oom": {"line": len(lines) - 2, "rank": 3, "gpu": 3, "tried": 2 * GiB,
            "capacity": round(79.11 * GiB), "free": round(1.5 * GiB),
            "allocated": round(74.25 * GiB), "reserved_unallocated": round(2.10 * GiB)}}


def megatron_report_memory(name, allocated, max_allocated, reserved, max_reserved):
    """megatron/training/utils.py report_memory: each figure / (1024 * 1024), printed by
    print("[Rank {}] {}".format(torch.distributed.get_rank(), string))."""
    mega_bytes = 1024.0 * 1024.0
    string = name + " memory (MB)"
    string += " | allocated: {}".format(allocated / mega_bytes)
    string += " | max allocated: {}".format(max_allocated / mega_bytes)
    string += " | reserved: {}".format(reserved / mega_bytes)
    string += " | max reserved: {}".format(max_reserved / mega_bytes)
    return string


# 2. Megatron-LM under srun -l (task prefixes " 0: ", "13: "): report_memory at each log
#    interval on 4 ranks, the training_log line between; rank 13 leaks 512 KiB/iteration
rng = random.Random(28)
lines = [" 0: using world size: 16, data-parallel size: 4, tensor-model-parallel size: 4"]
ranks = [0, 4, 8, 13]
for it in range(10, 2010, 10):
    for r in ranks:
        alloc = 20 * GiB + rng.randint(0, 64) * MiB + (512 * KiB * it if r == 13 else 0)
        lines.append("%2d: [Rank %d] %s" % (r, r, megatron_report_memory(
            "(after {} iterations)".format(it), alloc, alloc + 6 * GiB, alloc + 8 * GiB,
            alloc + 8 * GiB)))
    lines.append(" 0:  [2026-05-01 12:00:00] iteration %8d/  500000 | consumed samples: %12d | "
                 "elapsed time per iteration (ms): 1234.5 | learning rate: 3.000000E-04 | "
                 "global batch size:  1024 | lm loss: 2.345678E+00 | loss scale: 1.0 | "
                 "grad norm: 0.345 | number of skipped iterations:   0 | number of nan "
                 "iterations:   0 |" % (it, it * 1024))
write("megatron_srun.log", lines)
truth["megatron_srun.log"] = {"format": "megatron", "measure": "allocated", "ranks": ranks,
                              "leaking_rank": 13, "slope_per_iteration": 512 * KiB}

# 3. Megatron-LM, one rank, killed at iteration 2000 and resumed from the checkpoint of 1000:
#    each run warms up for 100 iterations (6 GiB) and is then flat. Two runs, both flat.
rng = random.Random(29)
lines = []
for it in list(range(10, 2010, 10)) + list(range(1010, 3010, 10)):
    first = 10 if it <= 2000 and len(lines) < 200 else 1010
    warm = min(it - first, 100) / 100
    alloc = 14 * GiB + warm * 6 * GiB + rng.randint(0, 32) * MiB
    lines.append("[Rank 0] " + megatron_report_memory("(after {} iterations)".format(it), alloc,
                                                      alloc + GiB, alloc + 2 * GiB,
                                                      alloc + 2 * GiB))
write("megatron_resume.log", lines)
truth["megatron_resume.log"] = {"runs": [{"first": 10, "last": 2000}, {"first": 1010,
                                                                        "last": 3000}],
                                "verdict": "flat"}


def deepspeed_see_memory_usage(message, ma, max_ma, ca, max_ca, vm_used_gb, vm_pct):
    """deepspeed/runtime/utils.py see_memory_usage: logger.info(message), then MA, Max_MA,
    CA / (1024 * 1024 * 1024) rounded to 2 places and Max_CA rounded, "GB", then the host's
    virtual memory (never GPU memory)."""
    g = 1024 * 1024 * 1024
    pre = "[2026-05-01 12:00:00,123] [INFO] [utils.py:781:see_memory_usage] "
    return [pre + message,
            pre + f"MA {round(ma / g, 2)} GB         Max_MA {round(max_ma / g, 2)} GB         "
                  f"CA {round(ca / g, 2)} GB         Max_CA {round(max_ca / g)} GB ",
            pre + f"CPU Virtual Memory:  used = {vm_used_gb} GB, percent = {vm_pct}%"]


# 4. DeepSpeed see_memory_usage after each step: no step on the line, 20 MiB more each call
rng = random.Random(30)
lines = []
for k in range(400):
    ma = 6 * GiB + 20 * MiB * k + rng.randint(0, 4) * MiB
    lines += deepspeed_see_memory_usage("After step", ma, ma + 2 * GiB, ma + 3 * GiB,
                                        ma + 3 * GiB, round(200 + k * 0.5, 2), 40.1)
write("deepspeed_memory.log", lines)
truth["deepspeed_memory.log"] = {"format": "deepspeed", "x": "sample", "samples": 400,
                                 "slope_per_sample": 20 * MiB, "verdict": "growing"}


def deepspeed_throughput(epoch, micro_step, global_step, avg, curr, mem, max_mem):
    """deepspeed/utils/timer.py ThroughputTimer.stop: memory_allocated() / 1024**3, "GB"."""
    return ("epoch={}/micro_step={}/global_step={}, RunningAvgSamplesPerSec={}, "
            "CurrSamplesPerSec={}, MemAllocated={}GB, MaxMemAllocated={}GB".format(
                epoch, micro_step, global_step, avg, curr, round(mem / 1024**3, 2),
                round(max_mem / 1024**3, 2)))


# 5. DeepSpeed's ThroughputTimer every 10 steps: warm-up then flat
rng = random.Random(31)
lines = []
for gs in range(10, 5010, 10):
    mem = 3 * GiB + min(gs, 150) / 150 * 8 * GiB + rng.randint(0, 20) * MiB
    lines.append("[2026-05-01 12:00:00,123] [INFO] [timer.py:260:stop] "
                 + deepspeed_throughput(0, gs * 8, gs, 31.2, 30.9, mem, mem + 12 * GiB))
write("deepspeed_timer.log", lines)
truth["deepspeed_timer.log"] = {"format": "deepspeed-timer", "verdict": "flat", "samples": 500}


def mmengine_line(epoch, i, n, memory_mb, loss):
    """mmengine/runner/log_processor.py LogProcessor.get_log_after_iter: "Epoch(train) [E][i/n]"
    and memory: _get_max_memory's max_memory_allocated() // (1024 * 1024), reset each log."""
    return (f"2026/05/01 12:00:00 - mmengine - INFO - Epoch(train)  [{epoch}][{i:>4}/{n}]  "
            f"base_lr: 1.0000e-02 lr: 1.0000e-02  eta: 1:02:03  time: 0.5123  data_time: 0.0123  "
            f"memory: {memory_mb}  grad_norm: 3.1  loss: {loss:.4f}")


# 6. mmengine, 12 epochs of 391 iterations logged every 50: flat peak per interval
rng = random.Random(32)
lines = []
for e in range(1, 13):
    for i in range(50, 392, 50):
        lines.append(mmengine_line(e, i, 391, 6814 + rng.randint(0, 20), 2.3))
    lines.append(f"2026/05/01 12:00:00 - mmengine - INFO - Epoch(val)  [{e}][100/100]    "
                 f"eta: 0:00:00  time: 0.1  data_time: 0.01  memory: 1234")
write("mmengine.log", lines)
truth["mmengine.log"] = {"format": "mmengine", "measure": "max_allocated", "verdict": "flat",
                         "first_step": 50, "last_step": 11 * 391 + 350, "samples": 12 * 7}


def swin_line(epoch, epochs, idx, num_steps, memory_used):
    """Swin-Transformer main.py train_one_epoch: mem {memory_used:.0f}MB with memory_used =
    torch.cuda.max_memory_allocated() / (1024.0 * 1024.0): a running maximum."""
    return (f"[2026-05-01 12:00:00 swin_tiny_patch4_window7_224] (main.py 230): INFO "
            f"Train: [{epoch}/{epochs}][{idx}/{num_steps}]\t"
            f"eta 0:10:00 lr 0.000100\t wd 0.0500\t"
            f"time 0.5000 (0.6000)\t"
            f"loss 6.9000 (6.9100)\t"
            f"grad_norm 1.0000 (1.0000)\t"
            f"loss_scale 65536.0000 (65536.0000)\t"
            f"mem {memory_used:.0f}MB")


# 7. Swin: its running maximum creeps 100 KiB/step (tabs between fields)
lines = []
for e in range(8):
    for idx in range(0, 1251, 10):
        step = e * 1251 + idx
        lines.append(swin_line(e, 300, idx, 1251, (10584 * MiB + 100 * KiB * step) / MiB))
write("swin.log", lines)
truth["swin.log"] = {"format": "swin", "measure": "max_allocated", "slope": 100 * KiB,
                     "verdict": "growing"}


def nvidia_smi_table(when, gpus):
    """nvidia-smi's default output (driver 535), printed again by `nvidia-smi -l 5`."""
    out = [when.ljust(31),
           "+---------------------------------------------------------------------------------------+",
           "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |",
           "|-----------------------------------------+----------------------+----------------------+",
           "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |",
           "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |",
           "|                                         |                      |               MIG M. |",
           "|=========================================+======================+======================|"]
    for g, used in enumerate(gpus):
        out += ["|   %d  NVIDIA H100 80GB HBM3          On  | 00000000:%02X:00.0 Off |"
                "                    0 |" % (g, 0x19 + g),
                "| N/A   30C    P0             120W / 700W |  %5dMiB / 81559MiB |     45%%      "
                "Default |" % used,
                "|                                         |                      |"
                "             Disabled |",
                "+-----------------------------------------+----------------------+"
                "----------------------+"]
    out += ["", "+---------------------------------------------------------------------------------------+",
            "| Processes:                                                                            |",
            "|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |",
            "|        ID   ID                                                             Usage      |",
            "|=======================================================================================|"]
    for g, used in enumerate(gpus):
        out.append("|    %d   N/A  N/A     %5d      C   python                                 "
                   "  %5dMiB |" % (g, 1000 + g, used - 300))
    out.append("+---------------------------------------------------------------------------------------+")
    return out


# 8. the nvidia-smi table every 5 s for 10 minutes, GPU 1 leaking 2 MiB/s
rng = random.Random(33)
lines = []
for k in range(120):
    t = 5 * k
    when = "Fri Dec  4 %02d:%02d:%02d 2026" % (10 + t // 3600, t // 60 % 60, t % 60)
    lines += nvidia_smi_table(when, [40000 + rng.randint(0, 3), 40000 + 2 * t])
write("nvsmi_table.log", lines)
truth["nvsmi_table.log"] = {"format": "nvidia-smi-table", "gpus": [0, 1], "leaking_gpu": 1,
                            "slope_per_second": 2 * MiB, "capacity": 81559 * MiB}

# 9. nvidia-smi dmon -s um -o DT every second, header repeated; GPU 0 flat, fb in MB
rng = random.Random(34)
lines = []
for k in range(600):
    if k % 50 == 0:
        lines += ["#Date       Time        gpu     sm    mem    enc    dec    jpg    ofa     fb   bar1   ccpm",
                  "#YYYYMMDD   HH:MM:SS    Idx      %      %      %      %      %      %     MB     MB     MB"]
    lines.append("20260501    12:%02d:%02d      0     87     34      0      0      0      0  %5d"
                 "      5      0" % (k // 60, k % 60, 50000 + rng.randint(0, 2)))
write("dmon.log", lines)
truth["dmon.log"] = {"format": "nvidia-smi-dmon", "verdict": "flat", "samples": 600}

# 10. nvidia-smi --query-gpu=timestamp,index,memory.free,memory.total --format=csv,nounits:
#     free only: used is total - free; GPU 0 leaking 1 MiB/s
lines = ["timestamp, index, memory.free [MiB], memory.total [MiB]"]
for k in range(300):
    lines.append("2026/05/01 12:%02d:%02d.000, 0, %d, 81559" % (k * 2 // 60, k * 2 % 60,
                                                               41559 - 2 * k))
write("nvsmi_free.csv", lines)
truth["nvsmi_free.csv"] = {"measure": "device_used", "slope_per_second": MiB,
                           "first_used": 40000 * MiB}

# 11. the line as it comes: CRLF, ANSI colour, NUL padding (a log written after a crash), tabs,
#     thousands separators beside the figures, a host-memory figure, an old-style OOM, the
#     last line cut short. 8 GiB + 256 KiB/step, the text format.
lines = []
for s in range(400):
    alloc = 8 * GiB + 256 * KiB * s
    style = s % 4
    if style == 0:
        lines.append("\x1b[1;32mINFO\x1b[0m step=%d alloc=%dB tokens=1,234,567 rss=12.5G" % (s, alloc))
    elif style == 1:
        lines.append("step: %d\t| CPU mem allocated: 99G\t| allocated: %.4f MiB\t| tps: 3,090"
                     % (s, alloc / MiB))
    elif style == 2:
        lines.append("\0\0\0\0step=%d alloc=%dB" % (s, alloc))
    else:
        lines.append("[2026-05-01 12:00:00] step %d memory_allocated=%.6fG cpu_memory_allocated=1G"
                     % (s, alloc / GiB))
lines.append("RuntimeError: CUDA out of memory. Tried to allocate 50.00 MiB (GPU 0; 22.38 GiB "
             "total capacity; 22.18 GiB already allocated; 16.81 MiB free; 22.20 GiB reserved "
             "in total by PyTorch)")
lines.append("step=400 alloc=99")
write("as_it_comes.log", lines, end="\r\n", last_newline=False)
truth["as_it_comes.log"] = {"slope": 256 * KiB, "samples": 400, "bad_lines": 1,
                            "first_bad_line": 402,
                            "oom": {"line": 401, "tried": 50 * MiB, "capacity": round(22.38 * GiB),
                                    "free": round(16.81 * MiB), "allocated": round(22.18 * GiB),
                                    "reserved_unallocated": round(0.02 * GiB)}}

# 12. a JSON Lines log with 11 lines cut short (a full disk): bad lines, named
lines = []
for s in range(300):
    line = json.dumps({"step": s, "memory_allocated": 4 * GiB + 64 * KiB * s})
    lines.append(line[:len(line) // 2] if s % 27 == 5 else line)
write("cut.jsonl", lines)
cut = [s for s in range(300) if s % 27 == 5]
truth["cut.jsonl"] = {"bad_lines": len(cut), "first_bad_line": cut[0] + 1, "slope": 64 * KiB,
                      "samples": 300 - len(cut)}


def hf_trainer_state(log_history, global_step):
    """transformers' TrainerState.save_to_json: json.dumps(dataclasses.asdict(self), indent=2,
    sort_keys=True) + "\n"; each log_history entry is Trainer.log's {**logs, "step": ...}.
    The Trainer logs no memory per step by itself: these entries carry a user callback's
    torch.cuda.memory_allocated() (bytes) and max_memory_allocated(); the last one holds
    TrainerMemoryTracker's train_mem_gpu_* deltas (not a series)."""
    state = {"best_metric": None, "best_model_checkpoint": None, "epoch": 3.0,
             "eval_steps": 500, "global_step": global_step, "is_hyper_param_search": False,
             "is_local_process_zero": True, "is_world_process_zero": True,
             "log_history": log_history, "logging_steps": 10, "max_steps": global_step,
             "num_train_epochs": 3, "save_steps": 500, "total_flos": 1.2e15,
             "train_batch_size": 8, "trial_name": None, "trial_params": None}
    return json.dumps(state, indent=2, sort_keys=True) + "\n"


# 13. HF Trainer's trainer_state.json: log_history every 10 steps, 128 KiB/step leak
rng = random.Random(35)
hist = []
for s in range(10, 3010, 10):
    alloc = 9 * GiB + 128 * KiB * s + rng.randint(0, 8) * MiB
    hist.append({"epoch": round(s / 1000, 2), "grad_norm": 0.9, "learning_rate": 5e-05,
                 "loss": 2.1, "memory_allocated": alloc, "max_memory_allocated": alloc + GiB,
                 "step": s})
hist.append({"epoch": 3.0, "step": 3000, "total_flos": 1.2e15, "train_loss": 2.0,
             "train_runtime": 1234.5, "train_samples_per_second": 19.4,
             "train_mem_gpu_alloc_delta": 123456789, "train_mem_gpu_peaked_delta": 23456789})
with open(os.path.join(HERE, "trainer_state.json"), "w") as f:
    f.write(hf_trainer_state(hist, 3000))
truth["trainer_state.json"] = {"format": "hf-trainer-state", "samples": 300,
                               "slope": 128 * KiB, "verdict": "growing"}


def wandb_system_line(t, used_per_gpu, total):
    """wandb's system metrics (wandb/sdk/internal/system/assets/gpu.py GPU.sample/aggregate)
    as wandb-events.jsonl holds them: per GPU N memoryAllocated (percent of the total) and
    memoryAllocatedBytes (NVML's used), beside the other system.* keys."""
    d = {"system.cpu": 12.5, "system.memory": 40.1, "system.proc.memory.rssMB": 9876.5}
    for g, used in enumerate(used_per_gpu):
        d["system.gpu.%d.gpu" % g] = 87.0
        d["system.gpu.%d.memory" % g] = 34.0
        d["system.gpu.%d.memoryAllocated" % g] = 100 * used / total
        d["system.gpu.%d.memoryAllocatedBytes" % g] = used
    d.update({"_wandb": True, "_timestamp": t, "_runtime": t - 1714567890.0})
    return json.dumps(d)


# 14. wandb's system metrics every 2 s for 20 minutes, GPU 1 leaking 512 KiB/s
lines = [wandb_system_line(1714567890.0 + 2 * k, [40 * GiB, 40 * GiB + 512 * KiB * 2 * k],
                           80 * GiB) for k in range(600)]
write("wandb-events.jsonl", lines)
truth["wandb-events.jsonl"] = {"format": "wandb", "gpus": [0, 1], "leaking_gpu": 1,
                               "slope_per_second": 512 * KiB}

with open(os.path.join(HERE, "truth.json"), "w") as f:
    json.dump(truth, f, indent=1, sort_keys=True)
    f.write("\n")
