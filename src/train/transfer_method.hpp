#pragma once
// experiment.method = transfer: the runtime smoke job. Each round every device
// computes for transfer.compute (stretched by its slowdown), sends transfer.bytes to the
// server over its uplink and gets the same amount back over its downlink; the server
// answers each device as soon as its upload is complete. No model is trained: this
// exercises links, transport, clocks, timeline and results file end to end.
#include "cmlbed/config/settings.hpp"
#include "cmlbed/train/method.hpp"

namespace cmlbed::train {

class TransferMethod : public Method {
 public:
  TransferMethod(const Settings& settings, int rank, int devices, MPI_Comm comm);
  void run_round(const RoundContext& context) override;
  std::optional<Evaluation> evaluate(const RoundContext&) override { return std::nullopt; }

 private:
  void serve(const RoundContext& context);
  void take_part(const RoundContext& context);

  std::size_t bytes_;
  std::chrono::nanoseconds compute_;
};

}  // namespace cmlbed::train
