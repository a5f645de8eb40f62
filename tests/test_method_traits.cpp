// The method table (config/methods.hpp): every row runs, its traits agree with each other,
// and the option table takes its method names and help from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/config/option_table.hpp"
#include "cmlbed/train/method_registry.hpp"

namespace cmlbed {
namespace {

TEST(MethodTable, EveryRowHasAFactoryAndEveryFactoryARow) {
  for (const MethodTraits& row : method_table()) EXPECT_TRUE(train::has_factory(row.name)) << row.name;
  for (const std::string& name : train::available_methods()) EXPECT_NE(find_method(name), nullptr) << name;
  EXPECT_EQ(train::available_methods().size(), method_table().size());
}

TEST(MethodTable, TraitsAgreeWithEachOther) {
  for (const MethodTraits& m : method_table()) {
    SCOPED_TRACE(m.name);
    EXPECT_FALSE(m.summary.empty());
    // Turns, replicas, micro-batches, gradients and personalisation are all about a
    // device part and a server part.
    if (m.takes_turns || m.server_replicas || m.micro_batches || m.sends_gradients || m.personalisable ||
        m.device_tail ||
        m.personalised_always || m.local_phase) {
      EXPECT_TRUE(m.splits_model);
    }
    EXPECT_FALSE(m.takes_turns && m.server_replicas);
    EXPECT_TRUE(!m.micro_batches || m.server_replicas);  // pipelined replicas
    // The planner's search space: a cut per device (replicas) or one for all (one server part).
    EXPECT_TRUE(!m.plannable || m.server_replicas || m.serves_in_device_order || m.serves_batches_together);
    // Devices served in an order: at once, by one server part, their parts then averaged.
    EXPECT_TRUE(!m.serves_in_device_order || (!m.takes_turns && !m.server_replicas && m.averages && m.splits_model));
    EXPECT_FALSE(m.personalisable && m.personalised_always);
    EXPECT_EQ(m.personalised_refusal.empty(), m.personalisable) << "a refusal exactly where refused";
    EXPECT_EQ(m.trains, m.noise != NoiseTarget::nothing);
    ASSERT_FALSE(m.privacy_mechanisms.empty());
    EXPECT_EQ(m.privacy_mechanisms.front(), "none");
    EXPECT_TRUE(m.trains || !(m.simulatable || m.checkpointable || m.splits_model || m.averages));
  }
}

TEST(MethodTable, ExperimentMethodTakesItsNamesDefaultAndHelpFromTheTable) {
  const OptionSpec* method = find_option("experiment.method");
  ASSERT_NE(method, nullptr);
  EXPECT_EQ(method->choices, method_names());
  EXPECT_EQ(method->default_value, default_method());
  EXPECT_NE(find_method(default_method()), nullptr);
  for (const MethodTraits& m : method_table()) {
    EXPECT_NE(method->help.find(m.name + " = " + m.summary), std::string::npos) << m.name;
  }
  // Options of one kind of method name exactly the methods of that kind.
  EXPECT_NE(find_option("train.server_streams")->help.find(method_list(&MethodTraits::server_replicas, "and")),
            std::string::npos);
  EXPECT_NE(find_option("train.personalised")->help.find(method_list(&MethodTraits::personalisable)),
            std::string::npos);
  EXPECT_NE(find_option("train.aggregate_every")->help.find(method_list(&MethodTraits::averages)),
            std::string::npos);
}

TEST(MethodTable, ListsReadAsEnglishAndUnknownNamesAreRefused) {
  EXPECT_EQ(method_list([](const MethodTraits& m) { return m.name == "sfl" || m.name == "pipar"; }, "or"),
            "sfl or pipar");
  EXPECT_EQ(method_list([](const MethodTraits& m) { return m.averages; }), "fl, sfl, pipar, sfl2, localloss, ushaped");
  EXPECT_EQ(method_list([](const MethodTraits& m) { return m.averages; }, "and"),
            "fl, sfl, pipar, sfl2, localloss and ushaped");
  EXPECT_EQ(method_list([](const MethodTraits&) { return false; }), "");
  EXPECT_EQ(find_method("fedprox"), nullptr);
  try {
    method_traits("fedprox");
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("fedprox is not a method; methods: fl, sl, sfl, pipar, sfl2,"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace cmlbed
