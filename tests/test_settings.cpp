// Typed settings: every option of the table has one field of its own, read from the
// resolved configuration with the value Config gives it, per device where it may differ.
#include <gtest/gtest.h>

#include <set>

#include "cmlbed/config/methods.hpp"
#include "cmlbed/config/option_rows.hpp"
#include "cmlbed/config/option_table.hpp"
#include "cmlbed/config/settings.hpp"

namespace cmlbed {
namespace {

std::vector<RawSetting> cli(std::initializer_list<std::pair<const char*, const char*>> pairs) {
  std::vector<RawSetting> out;
  for (const auto& [name, value] : pairs) out.push_back({name, value, "command line"});
  return out;
}

TEST(Settings, EveryOptionHasAFieldOfItsOwn) {
  const Settings settings = Settings::defaults();
  std::set<const void*> fields;
  for (const OptionSpec& spec : option_table()) {
    const void* field = settings.field_of(spec.name);
    EXPECT_TRUE(fields.insert(field).second) << spec.name << " shares its field";
    EXPECT_EQ(settings.name_of(field), spec.name);
  }
  EXPECT_EQ(fields.size(), option_table().size());
}

// A method's own options are rows of its method-table row, in the option table and bound
// to their section's fields like every other row.
TEST(Settings, AMethodsOwnOptionsAreInTheTableWithTheirFields) {
  const MethodTraits& adasplit = method_traits("adasplit");
  ASSERT_FALSE(adasplit.options.empty());
  const Settings settings = Settings::from(
      Config::resolve({}, cli({{"experiment.method", "adasplit"}, {"adasplit.temperature", "0.5"}})));
  for (const OptionSpec& own : adasplit.options) {
    EXPECT_EQ(own.section(), "adasplit");
    ASSERT_NE(find_option(own.name), nullptr) << own.name;
  }
  EXPECT_EQ(settings.name_of(&settings.adasplit.temperature), "adasplit.temperature");
  EXPECT_DOUBLE_EQ(settings.adasplit.temperature, 0.5);
  EXPECT_EQ(Settings::name(&Settings::sl, &SlSection::batches_per_turn), "sl.batches_per_turn");
}

// A row's binding knows whether its field can hold the row's values: a real option bound
// to an integer field, or a per-device option to a plain field, is refused.
TEST(Settings, ARowsFieldMustHoldItsValues) {
  using namespace rows;
  const OptionSpec real = option(CMLBED_FIELD(train, batch_size), OptionType::real, "1", "", "");
  EXPECT_FALSE(real.binding->holds(real));
  const OptionSpec integer = option(CMLBED_FIELD(train, batch_size), OptionType::integer, "1", "", "");
  EXPECT_TRUE(integer.binding->holds(integer));
  EXPECT_FALSE(real.binding->holds(per_device(integer)));
  const OptionSpec rate = per_device(option(CMLBED_FIELD(network, uplink_rate), OptionType::rate, "", "", ""));
  EXPECT_TRUE(rate.binding->holds(rate));
  OptionSpec shared = rate;
  shared.per_device = false;
  EXPECT_FALSE(rate.binding->holds(shared));
}

TEST(Settings, FieldsHoldTheResolvedValues) {
  const Config config = Config::resolve(
      {}, cli({{"experiment.method", "pipar"}, {"train.lr", "0.05"}, {"train.personalised", "true"},
               {"network.uplink_rate", "8mbit"}, {"network.delay", "5ms"}, {"network.burst", "32kb"},
               {"devices.flops", "2GFLOP/s"}, {"data.synthetic_shape", "3x16x16"}, {"plan.host_cores", "3"},
               {"transfer.compute", "2ms"}}));
  const Settings settings = Settings::from(config);
  EXPECT_EQ(settings.experiment.method, "pipar");
  EXPECT_DOUBLE_EQ(settings.train.lr, 0.05);
  EXPECT_TRUE(settings.train.personalised);
  EXPECT_EQ(settings.train.batch_size, config.integer("train.batch_size"));
  EXPECT_EQ(settings.network.uplink_rate.of(2), config.rate_bits_per_second("network.uplink_rate", 2));
  EXPECT_FALSE(settings.network.downlink_rate.of(1).has_value());
  EXPECT_EQ(settings.network.delay.of(1), std::chrono::milliseconds(5));
  EXPECT_EQ(settings.network.burst.all(), config.size("network.burst"));
  EXPECT_DOUBLE_EQ(*settings.devices.flops.of(1), 2e9);
  EXPECT_EQ(settings.data.synthetic_shape.to_string(), "3x16x16");
  EXPECT_EQ(settings.plan.host_cores, std::optional<std::int64_t>(3));
  EXPECT_EQ(settings.transfer.compute, std::chrono::milliseconds(2));
  EXPECT_EQ(Settings::defaults().plan.host_cores, std::nullopt);  // placement
}

TEST(Settings, PerDeviceValuesComeFromTheirSectionsAndDraws) {
  const Config config = Config::resolve(
      {}, cli({{"model.split", "auto"}, {"device.2.split", "3"}, {"devices.slowdown", "uniform(2,4)"},
               {"device.1.micro_batches", "auto"}}));
  const Settings settings = Settings::from(config);
  EXPECT_TRUE(settings.model.split.all().is_auto());
  EXPECT_TRUE(settings.model.split.of(1).is_auto());
  EXPECT_EQ(settings.model.split.of(2).value(), 3);
  EXPECT_THROW(settings.model.split.of(1).value(), std::logic_error);
  EXPECT_TRUE(settings.pipar.micro_batches.of(1).is_auto());
  EXPECT_EQ(settings.pipar.micro_batches.of(2).value(), 4);
  for (int device = 1; device <= 5; ++device) {
    EXPECT_DOUBLE_EQ(settings.devices.slowdown.of(device), config.real("devices.slowdown", device));
    EXPECT_GE(settings.devices.slowdown.of(device), 2.0);
  }
}

// The planner's choice replaces the autos, in the fields and in the stored text.
TEST(Settings, ChosenValuesReplaceTheAutos) {
  const Settings settings = Settings::from(Config::resolve(
      {}, cli({{"model.split", "auto"}, {"device.2.split", "3"}, {"device.3.split", "auto"},
               {"device.1.micro_batches", "auto"}})));
  EXPECT_TRUE(settings.any_auto(3));
  const Settings planned = settings.with_chosen(&Settings::model, &ModelSection::split, 2, {2, 9, 2})
                               .with_chosen(&Settings::pipar, &PiparSection::micro_batches, 8, {4, 8, 8});
  EXPECT_FALSE(planned.any_auto(3));
  EXPECT_EQ(planned.model.split.all().value(), 2);
  EXPECT_EQ(planned.model.split.of(1).value(), 2);
  EXPECT_EQ(planned.model.split.of(2).value(), 3);  // not auto: kept
  EXPECT_EQ(planned.model.split.of(3).value(), 2);  // its own auto: its own value
  EXPECT_EQ(planned.pipar.micro_batches.all().value(), 4);  // not auto
  EXPECT_EQ(planned.pipar.micro_batches.of(1).value(), 4);
  const std::string ini = planned.config().to_ini();
  EXPECT_NE(ini.find("split = 2\n"), std::string::npos) << ini;
  EXPECT_EQ(ini.find("auto"), std::string::npos) << ini;
  EXPECT_TRUE(settings.model.split.of(1).is_auto());  // the settings planned from stay as they were
}

TEST(Settings, NamesAndWordsOfAFieldForMessages) {
  const Settings settings = Settings::from(Config::resolve({}, cli({{"device.3.micro_batches", "2"}})));
  EXPECT_EQ(settings.name_of(&settings.pipar.micro_batches, 3), "device.3.micro_batches");
  EXPECT_EQ(settings.said(&settings.pipar.micro_batches, 3), "device.3.micro_batches = 2");
  EXPECT_EQ(settings.said(&settings.train.batch_size), "train.batch_size = 32");
  EXPECT_TRUE(settings.user_set(&settings.pipar.micro_batches));
  EXPECT_FALSE(settings.user_set(&settings.train.batch_size));
  EXPECT_EQ(Settings::name(&Settings::output, &OutputSection::file), "output.file");
  const int not_a_field = 0;
  EXPECT_THROW(settings.name_of(&not_a_field), std::logic_error);
}

}  // namespace
}  // namespace cmlbed
