#pragma once
// The subcommands of the cmlbed executable. Each takes the arguments after its name
// and returns the process exit status: 0 success, 2 bad input, 1 failure at run time.
namespace cmlbed::cli {

int info_command(int argc, char** argv);
int run_command(int argc, char** argv);
int profile_command(int argc, char** argv);
int simulate_command(int argc, char** argv);
int plan_command(int argc, char** argv);

}  // namespace cmlbed::cli
